package topo

import "encoding/binary"

// cpuid executes the CPUID instruction (in cpuid_amd64.s).
func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// hypervisorSignatures are the 12-byte vendor signatures the hypervisor
// publishes at CPUID leaf 0x40000000 ("KVMKVMKVM", "TCGTCGTCGTCG",
// "Microsoft Hv", ...) and, after Microsoft's, at 0x40000100, where KVM
// moves its own when it also offers Hyper-V's interface. There are none
// when CPUID leaf 1 says no hypervisor is present (bit 31 of ECX): on bare
// metal those leaves mean something else.
func hypervisorSignatures() []string {
	if _, _, ecx, _ := cpuid(1, 0); ecx&(1<<31) == 0 {
		return nil
	}
	sigs := []string{signatureAt(0x40000000)}
	if sigs[0] == "Microsoft Hv" {
		sigs = append(sigs, signatureAt(0x40000100))
	}
	return sigs
}

// signatureAt is the signature in EBX, ECX and EDX of a CPUID leaf.
func signatureAt(leaf uint32) string {
	_, ebx, ecx, edx := cpuid(leaf, 0)
	var b [12]byte
	binary.LittleEndian.PutUint32(b[0:], ebx)
	binary.LittleEndian.PutUint32(b[4:], ecx)
	binary.LittleEndian.PutUint32(b[8:], edx)
	return trimSignature(b[:])
}
