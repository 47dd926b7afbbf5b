package pgserver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// account is the operating-system user the server runs as.
type account struct {
	name     string
	uid, gid int
	other    bool // not the current user: switch credentials
}

// serverAccount picks the account: the current user, or when root an
// existing unprivileged one.
func serverAccount(want string) (account, error) {
	if os.Geteuid() != 0 {
		name := strconv.Itoa(os.Geteuid())
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return account{name: name, uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	names := []string{"postgres", "nobody"}
	if want != "" {
		names = []string{want}
	}
	for _, n := range names {
		u, err := user.Lookup(n)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return account{name: n, uid: uid, gid: gid, other: true}, nil
	}
	if want != "" {
		return account{}, fmt.Errorf("PostgreSQL refuses to run as root, and user %q does not exist or is root (name an existing unprivileged account)", want)
	}
	return account{}, errors.New("PostgreSQL refuses to run as root, and neither user postgres nor nobody exists (run numalab as another user, or create one)")
}

// unsearchable returns the first directory on the way to path that the
// account cannot enter, or "" when it can reach path.
func unsearchable(path string, uid, gid int) string {
	path = filepath.Clean(path)
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return d
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		mode := fi.Mode().Perm()
		var ok2 bool
		switch {
		case int(st.Uid) == uid:
			ok2 = mode&0o100 != 0
		case int(st.Gid) == gid:
			ok2 = mode&0o010 != 0
		default:
			ok2 = mode&0o001 != 0
		}
		if !ok2 {
			return d
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

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
