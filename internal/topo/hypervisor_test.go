package topo

import (
	"bytes"
	"os"
	"runtime"
	"testing"

	"github.com/numalab/numalab/internal/sysfs"
)

func TestSignatureHypervisor(t *testing.T) {
	for _, tt := range []struct {
		sigs []string
		want string
	}{
		{nil, ""},
		{[]string{""}, ""},
		{[]string{"KVMKVMKVM"}, "KVM"},
		{[]string{"TCGTCGTCGTCG"}, "QEMU TCG"},
		{[]string{"Microsoft Hv"}, "Microsoft"},
		{[]string{"Microsoft Hv", "KVMKVMKVM"}, "KVM"}, // KVM offering Hyper-V's interface
		{[]string{"Microsoft Hv", ""}, "Microsoft"},
		{[]string{"VMwareVMware"}, "VMware"},
		{[]string{"XenVMMXenVMM"}, "Xen"},
		{[]string{"NewVisor"}, "NewVisor"},
	} {
		if got := signatureHypervisor(tt.sigs); got != tt.want {
			t.Errorf("signatureHypervisor(%q) = %q, want %q", tt.sigs, got, tt.want)
		}
	}
}

func TestTrimSignature(t *testing.T) {
	for in, want := range map[string]string{
		"KVMKVMKVM\x00\x00\x00": "KVMKVMKVM",
		"TCGTCGTCGTCG":          "TCGTCGTCGTCG",
		"bhyve bhyve ":          "bhyve bhyve",
		"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00": "",
		"\x0d\x00\x00\x00\x40\x02\x00\x00\x00\x00\x00\x00": "", // a basic leaf's numbers, not a name
	} {
		if got := trimSignature([]byte(in)); got != want {
			t.Errorf("trimSignature(%q) = %q, want %q", in, got, want)
		}
	}
}

// A QEMU guest under TCG: DMI says QEMU, the CPU has the hypervisor flag,
// no KVM clock. CPUID's signature says TCG; a capture of it, which has no
// CPUID, says QEMU. Neither is KVM.
func TestHypervisorQEMUTCG(t *testing.T) {
	root := tree(t, map[string]string{
		"sys/class/dmi/id/sys_vendor":                                       "QEMU\n",
		"sys/class/dmi/id/product_name":                                     "Standard PC (i440FX + PIIX, 1996)\n",
		"sys/devices/system/clocksource/clocksource0/available_clocksource": "tsc acpi_pm \n",
	})
	f := sysfs.New(root)
	if got := hypervisor(f, true, []string{"TCGTCGTCGTCG"}); got != "QEMU TCG" {
		t.Errorf("TCG guest, live: hypervisor %q, want QEMU TCG", got)
	}
	if got := hypervisor(f, true, nil); got != "QEMU" {
		t.Errorf("TCG guest, captured: hypervisor %q, want QEMU", got)
	}
	if got := hypervisor(f, true, []string{"KVMKVMKVM"}); got != "KVM" {
		t.Errorf("KVM guest, live: hypervisor %q, want KVM", got)
	}
}

// On this machine, CPUID has a hypervisor signature exactly when
// /proc/cpuinfo has the hypervisor flag, and FromSysfs("/") names it.
func TestHypervisorSignatureHost(t *testing.T) {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip(err)
	}
	info, err := sysfs.ParseCPUInfo(bytes.NewReader(b))
	if err != nil || len(info) == 0 || len(info[0].Flags) == 0 {
		t.Skipf("no CPU flags in /proc/cpuinfo (%v)", err)
	}
	flagged := false
	for _, fl := range info[0].Flags {
		flagged = flagged || fl == "hypervisor"
	}
	sigs := hypervisorSignatures()
	if runtime.GOARCH != "amd64" {
		t.Skip("CPUID is read on amd64 only")
	}
	if flagged != (len(sigs) > 0) {
		t.Fatalf("hypervisor flag %v but CPUID signatures %q", flagged, sigs)
	}
	tp, err := FromSysfs("/")
	if err != nil {
		t.Fatal(err)
	}
	if h := signatureHypervisor(sigs); h != "" && tp.Hypervisor != h {
		t.Errorf("FromSysfs(\"/\") hypervisor %q, want %q from CPUID %q", tp.Hypervisor, h, sigs)
	}
	t.Logf("hypervisor flag %v, CPUID signatures %q, topology says %q", flagged, sigs, tp.Hypervisor)
}
