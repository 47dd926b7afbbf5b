package store

import (
	"fmt"

	"github.com/numalab/numalab/internal/result"
)

// Copied counts what Copy did.
type Copied struct {
	Runs, Items int // copied
	Present     int // runs already in the destination (by UID), left as they are
}

// Copy adds to dst every run of src that dst does not hold (by UID), with
// its machine and items, each run in one transaction. Runs keep their
// UID, times, status (as src reads it: "abandoned" when its process is
// gone) and items; dst gives them its own IDs. Copying again adds
// nothing. A run still running in src is copied as it is then, without
// its process, and a later copy does not update it. Item bodies are redacted again on the
// way, in case src was written by an older numalab.
func Copy(src, dst *Store) (Copied, error) {
	var c Copied
	if !src.uids {
		return c,
			fmt.Errorf("copying from %s: its runs have no UIDs yet (open it once with a command that stores a run)", src.name)
	}
	rows, err := src.db.Query(`SELECT id, uid FROM runs ORDER BY id`)
	if err != nil {
		return c, fmt.Errorf("copying from %s: %w", src.name, err)
	}
	type ref struct {
		id  int64
		uid string
	}
	var refs []ref
	for rows.Next() {
		var r ref
		if err := rows.Scan(&r.id, &r.uid); err != nil {
			rows.Close()
			return c, fmt.Errorf("copying from %s: %w", src.name, err)
		}
		refs = append(refs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("copying from %s: %w", src.name, err)
	}
	for _, ref := range refs {
		var n int
		if err := dst.db.QueryRow(dst.q(`SELECT count(*) FROM runs WHERE uid = ?`), ref.uid).Scan(&n); err != nil {
			return c, fmt.Errorf("copying run %d to %s: %w", ref.id, dst.name, err)
		}
		if n > 0 {
			c.Present++
			continue
		}
		r, err := src.Get(ref.id)
		if err != nil {
			return c, fmt.Errorf("copying from %s: %w", src.name, err)
		}
		result.RedactRun(r)
		added, err := dst.insertCopy(r, ref.uid)
		if err != nil {
			return c, fmt.Errorf("copying run %d of %s to %s: %w", ref.id, src.name, dst.name, err)
		}
		if added {
			c.Runs++
			c.Items += len(r.Results)
		} else {
			c.Present++
		}
	}
	return c, nil
}

// insertCopy stores r, with its items, under uid in one transaction;
// false if a run of that UID arrived meanwhile (another copy).
func (s *Store) insertCopy(r *result.Run, uid string) (bool, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if s.pg { // one copier of a UID at a time (SQLite's transactions are serial already)
		if _, err := tx.Exec(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, int32(pgCopyLockKey), uid); err != nil {
			return false, err
		}
	}
	var n int
	if err := tx.QueryRow(s.q(`SELECT count(*) FROM runs WHERE uid = ?`), uid).Scan(&n); err != nil || n > 0 {
		return false, err
	}
	id, err := s.insertRun(tx, r, uid, nil, false)
	if err != nil {
		return false, err
	}
	for _, it := range r.Results {
		if _, err := tx.Exec(s.q(`INSERT INTO items (run_id, seq, kind, body) VALUES (?, ?, ?, ?)`), id, it.Seq, it.Kind,
			string(it.Body)); err != nil {
			return false, err
		}
	}
	return true, tx.Commit()
}
