package engine

import (
	"context"
	"strings"
	"testing"
)

// TestMariaDBRepeat makes calls of both protocols on one connection that
// caches metadata and checks the answers are read to their end: a call of
// each kind after the other, an error the server reports, a CALL's
// several results, and the driver still in step after them.
func TestMariaDBRepeat(t *testing.T) {
	s := my.Server(t)
	ctx := context.Background()
	e, err := Open(ctx, "mariadb", Options{DSN: s.DSN(), MariaDBCacheMetadata: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, prepared := range []bool{true, false} {
		c, err := e.Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if mc := c.(*myConn); mc.cache == nil || !mc.cache.negotiated {
			t.Errorf("prepared %v: the connection did not negotiate the metadata cache with MariaDB %s", prepared, s.Version())
		}
		rep := c.(Repeater)
		one, err := rep.Repeat(ctx, "SELECT 1", prepared)
		if err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if err := one.Call(ctx); err != nil {
				t.Fatalf("prepared %v: %v", prepared, err)
			}
		}
		call := func(q string) error {
			r, err := rep.Repeat(ctx, q, false)
			if err != nil {
				return err
			}
			return r.Call(ctx)
		}
		if err := call("SELECT no_such_column"); err == nil || !strings.Contains(err.Error(), "error 1054 (42S22)") {
			t.Errorf("prepared %v: a bad query: %v; want error 1054", prepared, err)
		}
		if err := call("CREATE PROCEDURE IF NOT EXISTS two() BEGIN SELECT 1; SELECT 2, 3; END"); err != nil {
			t.Fatal(err)
		}
		if err := call("CALL two()"); err != nil {
			t.Errorf("prepared %v: CALL with two result sets: %v", prepared, err)
		}
		var got any
		if err := c.Query(ctx, "SELECT 1", nil,
			func(v []any) error { got = v[0]; return nil }); err != nil || got != int64(1) {
			t.Errorf("prepared %v: the driver after the repeated calls: %v, %v", prepared, got, err)
		}
		if err := one.Call(ctx); err != nil {
			t.Errorf("prepared %v: after the driver: %v", prepared, err)
		}
		if _, err := c.(Preparer).Prepare(ctx, "SELECT 1"); err == nil {
			t.Errorf("prepared %v: the driver prepared a statement on a connection that caches metadata", prepared)
		}
		if err := c.Close(); err != nil {
			t.Errorf("prepared %v: close: %v", prepared, err)
		}
	}
}
