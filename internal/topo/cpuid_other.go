//go:build !amd64

package topo

// hypervisorSignatures are none off amd64: the CPUID hypervisor leaf is an x86
// interface, and the sysfs and DMI evidence is all there is.
func hypervisorSignatures() []string { return nil }
