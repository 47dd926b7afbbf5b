package pgscript

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fakeConn records what the interpreter sends, and answers queries that
// contain a key of rows with those rows.
type fakeConn struct {
	log  []string
	rows map[string][][]any
	fail map[string]error // an error for statements containing the key
}

func (f *fakeConn) record(query string, args []any) error {
	f.log = append(f.log, fmt.Sprintf("%s %v", query, args))
	for k, err := range f.fail {
		if strings.Contains(query, k) {
			return err
		}
	}
	return nil
}

func (f *fakeConn) Exec(ctx context.Context, query string, args ...any) error {
	return f.record(query, args)
}

func (f *fakeConn) Query(ctx context.Context, query string, args []any, row func([]any) error) error {
	if err := f.record(query, args); err != nil {
		return err
	}
	for k, rows := range f.rows {
		if strings.Contains(query, k) {
			for _, r := range rows {
				if err := row(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

var _ Conn = (*fakeConn)(nil)

// evalSet runs `\set v expr` for client 0 and returns v as pgbench prints it.
func evalSet(expr string, opt Options) (string, error) {
	s, err := Parse("e.sql", strings.NewReader(`\set v `+expr+"\n"))
	if err != nil {
		return "", err
	}
	set, err := NewSet(opt, Weighted{Script: s, Weight: 1})
	if err != nil {
		return "", err
	}
	c := set.Client(0)
	if _, err := c.Run(context.Background(), &fakeConn{}, 0); err != nil {
		return "", err
	}
	return c.vars[set.index["v"]].String(), nil
}

// TestExpressions checks every operator and function against pgbench
// 15.18. Each want (or error) is what real pgbench gave for the
// expression E, by /tmp/pgv/pgeach.sh: a script e.sql of the two lines
//
//	\set v E
//	insert into out values (0, ':v');
//
// run as `pgbench -n -t 1 -M simple -f e.sql` against a throwaway
// PostgreSQL 15 server, then `psql -Atc 'select v from out'`. An error is
// the start of pgbench's message, or "syntax" for a syntax error.
func TestExpressions(t *testing.T) {
	tests := []struct {
		expr, want, err string
	}{
		{"1 + 2 * 3", "7", ""},
		{"(1 + 2) * 3", "9", ""},
		{"7 / 2", "3", ""},
		{"-7 / 2", "-3", ""},
		{"7 / -2", "-3", ""},
		{"7 % 3", "1", ""},
		{"-7 % 3", "-1", ""},
		{"7 % -3", "1", ""},
		{"5 - 3 - 1", "1", ""},
		{"- 2 * 3", "-6", ""},
		{"+5", "5", ""},
		{"-(-3)", "3", ""},
		{"1.5 + 1", "2.5", ""},
		{"2.5 * 2", "5", ""},
		{"1 / 2.0", "0.5", ""},
		{"1.0 / 3", "0.333333333333333", ""},
		{"5.0 / 0", "Infinity", ""},
		{"1 / 0.0", "Infinity", ""},
		{"0 / 0", "", "division by zero"},
		{"1 % 0", "", "division by zero"},
		{"9223372036854775807 + 1", "", "bigint add out of range"},
		{"-9223372036854775807 - 2", "", "bigint sub out of range"},
		{"9223372036854775807 * 2", "", "bigint mul out of range"},
		{"-9223372036854775808 / -1", "", "bigint div out of range"},
		{"-9223372036854775808 % -1", "0", ""},
		{"-9223372036854775808", "-9223372036854775808", ""},
		{"9223372036854775808", "", "syntax"},
		{"4611686018427387904 * -2", "-9223372036854775808", ""},
		{".5e1", "5", ""},
		{"1e3", "1000", ""},
		{"1.", "1", ""},
		{"1.5e-3", "0.0015", ""},
		{"0x10", "", "syntax"},
		{"6 & 3", "2", ""},
		{"6 | 3", "7", ""},
		{"6 # 3", "5", ""},
		{"~5", "-6", ""},
		{"1 << 3", "8", ""},
		{"1 << 65", "2", ""},
		{"-16 >> 2", "-4", ""},
		{"-1 >> 70", "-1", ""},
		{"6 & 3 | 8", "10", ""},
		{"2 # 3 & 1", "1", ""},
		{"1 << 2 + 1", "8", ""},
		{"1.5 % 2", "0", ""},
		{"2.5 & 7", "2", ""},
		{"1 = 1", "true", ""},
		{"1 = 1.0", "true", ""},
		{"1 <> 2", "true", ""},
		{"1 != 1", "false", ""},
		{"1 < 2", "true", ""},
		{"2 <= 2", "true", ""},
		{"3 > 2", "true", ""},
		{"2 >= 3", "false", ""},
		{"1.5 < 2", "true", ""},
		{"1 | 2 = 3", "true", ""},
		{"2 = 2 = true", "", "syntax"},
		{"1 < true", "", "cannot coerce boolean to int"},
		{"true + 1", "", "cannot coerce boolean to int"},
		{"true AND false", "false", ""},
		{"true OR false", "true", ""},
		{"NOT true", "false", ""},
		{"NOT 1 = 2", "true", ""},
		{"NOT true OR true", "true", ""},
		{"1 = 1 AND 2 = 3 OR true", "true", ""},
		{"1 AND 0", "", "cannot coerce int to boolean"},
		{"true AND NULL", "NULL", ""},
		{"NULL AND false", "NULL", ""},
		{"false AND NULL", "false", ""},
		{"NULL OR true", "NULL", ""},
		{"true OR NULL", "true", ""},
		{"false OR NULL", "NULL", ""},
		{"NOT NULL", "NULL", ""},
		{"NULL", "NULL", ""},
		{"NULL + 1", "NULL", ""},
		{"NULL = NULL", "NULL", ""},
		{"NULL IS NULL", "true", ""},
		{"1 IS NULL", "false", ""},
		{"1 ISNULL", "false", ""},
		{"NULL NOTNULL", "false", ""},
		{"3 IS NOT NULL", "true", ""},
		{"NULL IS TRUE", "false", ""},
		{"1 IS TRUE", "false", ""},
		{"true IS TRUE", "true", ""},
		{"false IS FALSE", "true", ""},
		{"TRUE IS NOT FALSE", "true", ""},
		{"1 IS 1", "", "syntax"},
		{"CASE WHEN true THEN 1 ELSE 2 END", "1", ""},
		{"CASE WHEN false THEN 1 ELSE 2 END", "2", ""},
		{"CASE WHEN 0 THEN 1 WHEN 2 THEN 3 END", "3", ""},
		{"CASE WHEN false THEN 1 END", "NULL", ""},
		{"CASE WHEN NULL THEN 1 ELSE 2 END", "2", ""},
		{"CaSe WHEN true THEN 1 ELSE 2 END", "1", ""},
		{"CASE 1 WHEN 1 THEN 2 END", "", "syntax"},
		{"abs(-3)", "3", ""},
		{"abs(-3.5)", "3.5", ""},
		{"abs(-9223372036854775807-1)", "-9223372036854775808", ""},
		// pgbench reads a boolean as a double here (undefined: it printed 4.94065645841247e-324); refused
		{"abs(true)", "", "cannot coerce boolean to double"},
		{"debug(7)", "7", ""},
		{"debug(NULL)", "NULL", ""},
		{"double(3)", "3", ""},
		{"double(true)", "", "cannot coerce boolean to double"},
		{"exp(1)", "2.71828182845905", ""},
		{"exp(0)", "1", ""},
		{"greatest(1, 2.5, 2)", "2.5", ""},
		{"greatest(3, 7, 5)", "7", ""},
		{"greatest(true)", "", "cannot coerce boolean to int"},
		{"least(3, 1, 2)", "1", ""},
		{"least(1.5, 1)", "1", ""},
		{"least(1, NULL)", "NULL", ""},
		{"hash(42, 0)", "-3251795447530343920", ""},
		{"hash(1.6, 0)", "-4083905729319787502", ""},
		{"hash(NULL)", "NULL", ""},
		{"hash_fnv1a(42, 0)", "-55488592825689361", ""},
		{"hash_fnv1a(-1, 7)", "923706717037857242", ""},
		{"hash_fnv1a(0, 0)", "-6284781860667377211", ""},
		{"hash_murmur2(42, 0)", "-3251795447530343920", ""},
		{"hash_murmur2(-7, 12345)", "7957123787259568937", ""},
		{"hash_murmur2(0, 0)", "8217090173679840641", ""},
		{"hash(10, 5432)", "-5817877081768721676", ""},
		{"hash_fnv1a(10, 5432)", "-7793829335365542153", ""},
		{"int(5.7)", "6", ""},
		{"int(-2.5)", "-2", ""},
		{"int(2.5)", "2", ""},
		{"int(5.4 + 3.8)", "9", ""},
		{"int(9.2e18)", "9200000000000000000", ""},
		{"int(1e19)", "", "double to int overflow"},
		{"int(true)", "", "cannot coerce boolean to int"},
		{"ln(2.718281828459045)", "1", ""},
		{"ln(0)", "-Infinity", ""},
		{"mod(10, 3)", "1", ""},
		{"mod(-7, -1)", "0", ""},
		{"mod(5.5, 2)", "0", ""},
		{"mod(7, 0)", "", "division by zero"},
		{"mod(7)", "", "syntax"},
		{"permute(0, 10, 5432)", "6", ""},
		{"permute(-1, 10, 5432)", "7", ""},
		{"permute(3, 1, 5432)", "0", ""},
		{"permute(3, 0)", "", "permute size parameter must be greater than zero"},
		{"permute(123456789, 1000000007, -42)", "964867322", ""},
		{"pi()", "3.14159265358979", ""},
		{"pi(1)", "", "syntax"},
		{"pow(2, 10)", "1024", ""},
		{"power(2, 0.5)", "1.4142135623731", ""},
		{"pow(-8, 1.0/3)", "NaN", ""},
		{"random(5, 5)", "5", ""},
		{"random(5, 4)", "", "empty range given to random"},
		{"random(-9223372036854775808, 9223372036854775807)", "", "random range is too large"},
		{"random(1)", "", "syntax"},
		{"random_exponential(1, 10, 0)", "", "exponential parameter must be greater than zero"},
		{"random_exponential(3, 3, 1.5)", "3", ""},
		{"random_gaussian(1, 10, 1.5)", "", "gaussian parameter must be at least 2 "},
		{"random_gaussian(7, 7, 2.0)", "7", ""},
		{"random_zipfian(1, 10, 1.0)", "", "zipfian parameter must be in range [1.001, 1000]"},
		{"random_zipfian(1, 10, 1001)", "", "zipfian parameter must be in range [1.001, 1000]"},
		{"random_zipfian(4, 4, 1.5)", "4", ""},
		{"sqrt(2)", "1.4142135623731", ""},
		{"sqrt(-1)", "NaN", ""},
		{"sqrt(4, 2)", "", "syntax"},
		{"foo(1)", "", "syntax"},
		{"ABS(-1)", "1", ""},
		{"(1", "", "syntax"},
		{"1 +", "", "syntax"},
		{"1 2", "", "syntax"},
		{"1 ^ 2", "", "syntax"},
		{":nosuch + 1", "", "undefined variable \"nosuch\""},
		{":scale * 2", "2", ""},
		{":client_id", "0", ""},
	}
	for _, tt := range tests {
		got, err := evalSet(tt.expr, Options{Seed: 1})
		switch {
		case tt.err == "syntax":
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("%s: got %q, %v; want a syntax error", tt.expr, got, err)
			}
		case tt.err != "":
			if err == nil || errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: got %q, %v; want an error with %q", tt.expr, got, err, tt.err)
			}
		case err != nil || got != tt.want:
			t.Errorf("%s: got %q, %v; want %q", tt.expr, got, err, tt.want)
		}
	}
}
