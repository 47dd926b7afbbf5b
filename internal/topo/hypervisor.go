package topo

import (
	"strings"

	"github.com/numalab/numalab/internal/sysfs"
)

// signatureHypervisor names the hypervisor from its CPUID signatures
// (hypervisorSignatures): KVM wherever it appears, since KVM may also
// offer Hyper-V's interface under Microsoft's signature; otherwise the
// first signature, by its usual name, or as the hypervisor spells it when
// unknown; "" when there is none.
func signatureHypervisor(sigs []string) string {
	names := map[string]string{
		"KVMKVMKVM":    "KVM",
		"TCGTCGTCGTCG": "QEMU TCG",
		"Microsoft Hv": "Microsoft",
		"VMwareVMware": "VMware",
		"XenVMMXenVMM": "Xen",
		"VBoxVBoxVBox": "VirtualBox",
		"bhyve bhyve":  "bhyve",
		"lrpepyh  vr":  "Parallels",
		"ACRNACRNACRN": "ACRN",
	}
	for _, s := range sigs {
		if s == "KVMKVMKVM" {
			return "KVM"
		}
	}
	for _, s := range sigs {
		if s == "" {
			continue
		}
		if n, ok := names[s]; ok {
			return n
		}
		return s
	}
	return ""
}

// trimSignature is a CPUID signature without the NULs and blanks that pad
// it to 12 bytes, or "" when it has no printable character.
func trimSignature(b []byte) string {
	s := strings.TrimSpace(strings.TrimRight(string(b), "\x00"))
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return ""
		}
	}
	return s
}

// hypervisor names the hypervisor from the most specific evidence there
// is: the signature it gives itself in CPUID (sigs, on the running
// machine only), /sys/hypervisor/type, the DMI vendor and product, a
// paravirtual clock source, and last the CPU's hypervisor flag alone
// ("yes"). The flag is set under QEMU's TCG emulation as under KVM, so it
// never tells them apart.
func hypervisor(f sysfs.FS, flagged bool, sigs []string) string {
	if h := signatureHypervisor(sigs); h != "" {
		return h
	}
	if s, err := f.String("sys/hypervisor/type"); err == nil && s != "" {
		if s == "xen" {
			return "Xen"
		}
		return s
	}
	vendor, _ := f.String("sys/class/dmi/id/sys_vendor")
	product, _ := f.String("sys/class/dmi/id/product_name")
	clocks, _ := f.String("sys/devices/system/clocksource/clocksource0/available_clocksource")
	if h := dmiHypervisor(vendor, product, strings.Contains(clocks, "kvm-clock"), flagged); h != "" {
		return h
	}
	switch {
	case strings.Contains(clocks, "hyperv"):
		return "Microsoft"
	case strings.Contains(clocks, "xen"):
		return "Xen"
	case flagged:
		return "yes"
	}
	return ""
}

// dmiHypervisor names a hypervisor from the DMI system vendor and product
// name; kvmClock, the paravirtual clock KVM offers, tells KVM from QEMU's
// own emulation, and flagged (the CPU's hypervisor flag) confirms the
// clock alone.
func dmiHypervisor(vendor, product string, kvmClock, flagged bool) string {
	dmi := strings.ToLower(vendor + " " + product)
	switch {
	case strings.Contains(dmi, "vmware"):
		return "VMware"
	case strings.Contains(dmi, "virtualbox") || strings.Contains(dmi, "innotek"):
		return "VirtualBox"
	case strings.Contains(dmi, "microsoft") && strings.Contains(dmi, "virtual"):
		return "Microsoft"
	case strings.Contains(dmi, "xen"):
		return "Xen"
	case strings.Contains(dmi, "kvm") || strings.Contains(dmi, "google compute engine"):
		return "KVM"
	case strings.Contains(dmi, "qemu"):
		if kvmClock {
			return "KVM"
		}
		return "QEMU"
	case kvmClock:
		return "KVM"
	}
	return ""
}
