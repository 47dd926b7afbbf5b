// Package setting names the setting a bad input is about, so that the
// packages that check settings never spell a command-line flag: they
// return an Error with the setting's name, and its text spells the name as
// numalab's commands define the flag (package cliflag defines every flag
// by the same name).
//
// It knows names, not flags: which command takes a setting, and whether
// it came from a flag or a sweep file, is the caller's.
package setting

import (
	"errors"
	"fmt"
)

// Error is a bad value of setting Name (a flag's name, without dashes),
// or of Name and the settings With together (two that exclude each
// other, a pair given out of order).
type Error struct {
	Name string
	With []string
	Err  error
}

// Error is the setting spelled as the flag package reports its own
// errors, "-name" (or "-name and -other", "-a, -b and -c"), then what was
// wrong.
func (e *Error) Error() string {
	names := "-" + e.Name
	for i, w := range e.With {
		sep := ", -"
		if i == len(e.With)-1 {
			sep = " and -"
		}
		names += sep + w
	}
	return names + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf is an Error about setting name, with the text of fmt.Errorf.
func Errorf(name, format string, a ...any) error {
	return &Error{Name: name, Err: fmt.Errorf(format, a...)}
}

// Wrap is err about setting name.
func Wrap(name string, err error) error { return &Error{Name: name, Err: err} }

// New is an Error about setting name with text.
func New(name, text string) error { return &Error{Name: name, Err: errors.New(text)} }

// Together is an Error about the settings names together (at least one),
// with the text of fmt.Errorf.
func Together(names []string, format string, a ...any) error {
	return &Error{Name: names[0], With: names[1:], Err: fmt.Errorf(format, a...)}
}
