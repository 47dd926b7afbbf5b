package vmtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// ErrUnavailable is wrapped by [Find]'s error when this host cannot boot
// guests: tests skip with its message.
var ErrUnavailable = errors.New("emulated machines unavailable")

// Host is what booting a guest needs on this machine.
type Host struct {
	Qemu    string // qemu-system-x86_64
	Busybox string // a busybox binary (busybox-static)
	Kernel  string // a bzImage with CONFIG_NUMA=y
	Brd     string // the kernel's brd.ko (RAM disk), "" if the kernel has none
	// Net are the kernel's modules for a virtio NIC, in the order they
	// load (each after those it depends on); nil if it lacks one.
	Net   []string
	Cache string // directory of cached initramfs parts and the lock
}

// kernelPackage is the Debian metapackage whose dependency is the kernel.
const kernelPackage = "linux-image-cloud-amd64"

// Find finds qemu, busybox and a kernel. As root with apt it fetches the
// kernel into the cache when the cache has none; it installs nothing.
// When something is missing the error wraps [ErrUnavailable] and says
// what to install.
func Find() (*Host, error) {
	h := &Host{}
	var err error
	if h.Qemu, err = exec.LookPath("qemu-system-x86_64"); err != nil {
		return nil, fmt.Errorf("%w: no qemu-system-x86_64 (install Debian's qemu-system-x86; .ci/run does as root)",
			ErrUnavailable)
	}
	if h.Busybox, err = exec.LookPath("busybox"); err != nil {
		return nil, fmt.Errorf("%w: no busybox (install Debian's busybox-static; .ci/run does as root)", ErrUnavailable)
	}
	if h.Cache, err = cacheDir(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	kdir := filepath.Join(h.Cache, "kernel")
	if h.Kernel, h.Brd = findKernel(kdir); h.Kernel == "" {
		if err := fetchKernel(kdir); err != nil {
			return nil, fmt.Errorf("%w: no guest kernel in %s and fetching %s failed: %v",
				ErrUnavailable, kdir, kernelPackage, err)
		}
		if h.Kernel, h.Brd = findKernel(kdir); h.Kernel == "" {
			return nil, fmt.Errorf("%w: %s unpacked into %s has no boot/vmlinuz-*", ErrUnavailable, kernelPackage, kdir)
		}
	}
	h.Net = findNetModules(kdir, h.Kernel)
	return h, nil
}

// netModules are the modules of a virtio NIC in Debian's cloud kernel
// (CONFIG_VIRTIO_NET=m and what it depends on), by path under the
// kernel's modules directory, in load order.
var netModules = []string{
	"drivers/virtio/virtio_ring.ko", "drivers/virtio/virtio.ko",
	"drivers/virtio/virtio_pci_modern_dev.ko", "drivers/virtio/virtio_pci_legacy_dev.ko", "drivers/virtio/virtio_pci.ko",
	"net/core/failover.ko", "drivers/net/net_failover.ko", "drivers/net/virtio_net.ko",
}

// findNetModules returns the paths of netModules for kernel under dir,
// or nil when one is missing.
func findNetModules(dir, kernel string) []string {
	version := strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-")
	var out []string
	for _, m := range netModules {
		p := filepath.Join(dir, "lib", "modules", version, "kernel", m)
		if _, err := os.Stat(p); err != nil {
			return nil
		}
		out = append(out, p)
	}
	return out
}

// cacheDir is numalab-vmtest under the user's cache directory, else under
// /var/tmp.
func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = "/var/tmp"
	}
	dir := filepath.Join(base, "numalab-vmtest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("making the cache directory: %w", err)
	}
	return dir, nil
}

// findKernel returns the first vmlinuz under dir/boot and its brd.ko.
func findKernel(dir string) (kernel, brd string) {
	ks, _ := filepath.Glob(filepath.Join(dir, "boot", "vmlinuz-*"))
	if len(ks) == 0 {
		return "", ""
	}
	kernel = ks[0]
	version := strings.TrimPrefix(filepath.Base(kernel), "vmlinuz-")
	brd = filepath.Join(dir, "lib", "modules", version, "kernel", "drivers", "block", "brd.ko")
	if _, err := os.Stat(brd); err != nil {
		brd = ""
	}
	return kernel, brd
}

var dependsRE = regexp.MustCompile(`(?m)^\s*Depends: (linux-image-\S+)`)

// fetchKernel downloads the kernel package kernelPackage depends on and
// unpacks it into dir (dpkg -x: files only, nothing installed).
func fetchKernel(dir string) error {
	if os.Geteuid() != 0 {
		return errors.New("not root (run the tests as root once, or .ci/run)")
	}
	for _, tool := range []string{"apt-cache", "apt-get", "dpkg"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("no %s (a Debian host is needed to fetch the kernel)", tool)
		}
	}
	out, err := exec.Command("apt-cache", "depends", kernelPackage).Output()
	if err != nil {
		return fmt.Errorf("apt-cache depends %s: %w (run apt-get update)", kernelPackage, err)
	}
	m := dependsRE.FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("apt-cache depends %s names no linux-image package", kernelPackage)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "fetch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	get := exec.Command("apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", string(m[1]))
	get.Dir = tmp
	if out, err := get.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get download %s: %w: %s", m[1], err, bytes.TrimSpace(out))
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
	if len(debs) != 1 {
		return fmt.Errorf("apt-get download %s left %d .deb files", m[1], len(debs))
	}
	unpacked := filepath.Join(tmp, "x")
	if out, err := exec.Command("dpkg", "-x", debs[0], unpacked).CombinedOutput(); err != nil {
		return fmt.Errorf("dpkg -x %s: %w: %s", debs[0], err, bytes.TrimSpace(out))
	}
	os.RemoveAll(dir)
	return os.Rename(unpacked, dir)
}
