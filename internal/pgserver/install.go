package pgserver

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// linkInstall recreates the installation holding binDir (its parent: bin,
// lib, share) under dst, hard-linking files where it can and copying them
// otherwise; it returns the new bin directory.
func linkInstall(binDir, dst string) (string, error) {
	src := filepath.Dir(binDir)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			if os.Link(p, to) == nil {
				return nil
			}
			return copyFile(p, to)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("linking %s into %s: %w", src, dst, err)
	}
	return filepath.Join(dst, filepath.Base(binDir)), nil
}

func copyFile(from, to string) error {
	fi, err := os.Stat(from)
	if err != nil {
		return err
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm()|0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
