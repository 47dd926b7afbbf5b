package managed

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Account is the operating-system user a server runs as.
type Account struct {
	Name     string
	UID, GID int
	// Other says it is not the current user: the children switch to it.
	Other bool
}

// pickAccount returns the current user, or when root the first existing
// unprivileged account of want (when given) or k.Accounts.
func pickAccount(want string, k Kind) (Account, error) {
	if os.Geteuid() != 0 {
		name := strconv.Itoa(os.Geteuid())
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
		return Account{Name: name, UID: os.Geteuid(), GID: os.Getegid()}, nil
	}
	names := k.Accounts
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
		return Account{Name: n, UID: uid, GID: gid, Other: true}, nil
	}
	if want != "" {
		return Account{}, fmt.Errorf("%s, and user %q does not exist or is root (name an existing unprivileged account)",
			k.RootRefusal, want)
	}
	return Account{}, errors.New(k.RootRefusal + ", and neither user " + strings.Join(k.Accounts, " nor ") +
		" exists (run numalab as another user, or create one)")
}

// Unsearchable returns the first directory on the way to path (its
// parent, then up to /) that the account uid:gid cannot enter, or "" when
// it can reach path.
func Unsearchable(path string, uid, gid int) string {
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
