package mariaserver

import (
	"errors"
	"fmt"
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
	names := []string{"mysql", "nobody"}
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
		return account{}, fmt.Errorf("numalab runs its MariaDB server as an unprivileged user, and user %q does not exist or is root (name an existing unprivileged account)", want)
	}
	return account{}, errors.New("numalab runs its MariaDB server as an unprivileged user, and neither user mysql nor nobody exists (run numalab as another user, or create one)")
}

// unsearchable returns the first directory on the way to path that the
// account cannot enter, or "" when it can reach path.
func unsearchable(path string, uid, gid int) string {
	for d := filepath.Clean(path); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return d
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		mode := fi.Mode().Perm()
		var can bool
		switch {
		case int(st.Uid) == uid:
			can = mode&0o100 != 0
		case int(st.Gid) == gid:
			can = mode&0o010 != 0
		default:
			can = mode&0o001 != 0
		}
		if !can {
			return d
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}
