package main

import (
	"errors"

	"github.com/numalab/numalab/internal/cliflag"
	"github.com/numalab/numalab/internal/modelinput"
	"github.com/numalab/numalab/internal/published"
)

func cmdModelValidate(e *env, args []string) error {
	fs := cliflag.New(e.stderr, "model validate", helpText("model-validate"))
	file := fs.String("results", "", "published results, a JSON `file` in the form of the built-in one (default: built in, docs/model.md)")
	asJSON := fs.Bool("json", false, "print JSON")
	done, errs, err := cliflag.ParseChecked(e.stdout, fs, args)
	if done {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	r, err := modelinput.Results(*file)
	if err != nil {
		return err
	}
	v, err := published.Validate(r)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, v)
	}
	return published.WriteValidation(e.stdout, r, v)
}
