package vmtest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

// initScript is the guest's /init. It mounts what a command expects, puts
// a RAM disk of the filesystem run.env names at /data when run.env asks
// (ext2 by busybox's mke2fs; else by the host's, which Run carries into
// /opt/bin), loads the NIC's modules and gives eth0 its address when
// run.env names a host port, runs /run.sh with its output on the second
// serial port and its status on the console, and powers off.
const initScript = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc p /proc; mount -t sysfs s /sys; mount -t devtmpfs d /dev
mount -t tmpfs -o mode=1777 t /tmp; mkdir -p /dev/shm; mount -t tmpfs t /dev/shm; hostname numavm
echo "@@BOOTED $(cut -d' ' -f1 /proc/uptime)" >/dev/ttyS0
stty -F /dev/ttyS1 raw -echo
export PATH=/opt/bin:/bin HOME=/tmp TMPDIR=/tmp LANG=C.UTF-8
cd /tmp; . /run.env
if [ "$RAMDISK_MIB" -gt 0 ]; then
	# busybox's mke2fs (its shell prefers its applets to PATH) makes ext2 only
	mk=mke2fs; [ "$RAMDISK_FS" = ext2 ] || mk="/opt/bin/mke2fs -t $RAMDISK_FS"
	insmod /lib/modules/brd.ko rd_nr=1 rd_size=$((RAMDISK_MIB*1024)) && $mk -q /dev/ram0 &&
		mkdir /data && mount -t $RAMDISK_FS /dev/ram0 /data && cd /data || echo "@@NODISK" >/dev/ttyS0
fi
if [ "$HOST_PORT" -gt 0 ]; then
	for m in /lib/modules/net/*.ko; do insmod $m; done
	for i in $(seq 50); do [ -e /sys/class/net/eth0 ] && break; sleep 0.1; done
	ip link set lo up && ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 || echo "@@NONET" >/dev/ttyS0
fi
{ sh /run.sh </dev/null; echo $? >/rc; } 2>&1 | cat >/dev/ttyS1
echo "@@EXIT $(cat /rc)" >/dev/ttyS0
poweroff -f
`

// cached returns the path of cache/prefix-HASH.cpio, building it with build
// when it does not exist. HASH is of key. A used file's time is renewed;
// parts of the same prefix unused for a day are removed.
func cached(cache, prefix string, key []byte, build func(w io.Writer) error) (string, error) {
	sum := sha256.Sum256(key)
	name := filepath.Join(cache, prefix+"-"+hex.EncodeToString(sum[:8])+".cpio")
	if _, err := os.Stat(name); err == nil {
		now := time.Now()
		return name, os.Chtimes(name, now, now)
	}
	olds, _ := filepath.Glob(filepath.Join(cache, prefix+"-*.cpio"))
	for _, old := range olds {
		if fi, err := os.Stat(old); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.Remove(old)
		}
	}
	f, err := os.CreateTemp(cache, prefix+"-*.tmp")
	if err != nil {
		return "", fmt.Errorf("building the initramfs: %w", err)
	}
	defer os.Remove(f.Name())
	if err := build(f); err != nil {
		f.Close()
		return "", fmt.Errorf("building the initramfs: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("building the initramfs: %w", err)
	}
	return name, os.Rename(f.Name(), name)
}

// base is the cached archive of busybox, its libraries, /init, brd.ko
// and the NIC's modules (in lib/modules/net, named in load order).
func (h *Host) base() (string, error) {
	files := []string{h.Busybox}
	if h.Brd != "" {
		files = append(files, h.Brd)
	}
	files = append(files, h.Net...)
	libs, err := sharedLibs(h.Busybox)
	if err != nil {
		return "", err
	}
	key, err := contentKey(append(files, libs...))
	if err != nil {
		return "", err
	}
	key = append(key, initScript...)
	return cached(h.Cache, "base", key, func(w io.Writer) error {
		c := newCpio(w)
		for _, d := range []string{"proc", "sys", "dev", "tmp", "etc", "opt/bin", "lib/modules", "lib/modules/net"} {
			c.Dir(d, 0o755)
		}
		c.File("init", 0o755, []byte(initScript))
		c.File("etc/passwd", 0o644, []byte("root:x:0:0::/tmp:/bin/sh\n"))
		c.File("etc/group", 0o644, []byte("root:x:0:\n"))
		if err := addFile(c, "bin/busybox", h.Busybox, 0o755); err != nil {
			return err
		}
		if h.Brd != "" {
			if err := addFile(c, "lib/modules/brd.ko", h.Brd, 0o644); err != nil {
				return err
			}
		}
		for i, m := range h.Net {
			if err := addFile(c, fmt.Sprintf("lib/modules/net/%d-%s", i, filepath.Base(m)), m, 0o644); err != nil {
				return err
			}
		}
		for _, l := range libs {
			if err := addFile(c, l, l, 0o755); err != nil {
				return err
			}
		}
		return c.Close()
	})
}

// payload is the cached archive of files in /opt/bin and every shared
// library they load, at the path the loader looks for it.
func (h *Host) payload(files []string) (string, error) {
	libs, err := sharedLibs(files...)
	if err != nil {
		return "", err
	}
	key, err := contentKey(append(slices.Clone(files), libs...))
	if err != nil {
		return "", err
	}
	return cached(h.Cache, "payload", key, func(w io.Writer) error {
		c := newCpio(w)
		for _, f := range files {
			if err := addFile(c, "opt/bin/"+filepath.Base(f), f, 0o755); err != nil {
				return err
			}
		}
		for _, l := range libs {
			if err := addFile(c, l, l, 0o755); err != nil {
				return err
			}
		}
		return c.Close()
	})
}

// addFile adds the host file src (symbolic links followed) as name.
func addFile(c *cpioWriter, name, src string, perm int) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	c.File(name, perm, b)
	return nil
}

// contentKey hashes the names and contents of files.
func contentKey(files []string) ([]byte, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("building the initramfs: %w", err)
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	return h.Sum(nil), nil
}

var libRE = regexp.MustCompile(`(/[^\s:]+\.so[^\s:]*)`)

// sharedLibs lists the shared libraries and loader ldd names for files,
// sorted; none for static binaries.
func sharedLibs(files ...string) ([]string, error) {
	var libs []string
	for _, f := range files {
		out, err := exec.Command("ldd", f).Output()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			continue // "not a dynamic executable": nothing to carry
		}
		if err != nil {
			return nil, fmt.Errorf("listing the libraries of %s: %w", f, err)
		}
		for _, m := range libRE.FindAllSubmatch(out, -1) {
			libs = append(libs, string(m[1]))
		}
	}
	slices.Sort(libs)
	return slices.Compact(libs), nil
}
