package sysfs

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Captured on this project's KVM guest (two CPUs), shortened.
const interruptsText = `           CPU0       CPU1       
  0:         42          0   IO-APIC   2-edge      timer
 25:          0          0  PCI-MSIX-0000:00:03.0   0-edge      virtio1-config
 32:        270          0  PCI-MSIX-0000:00:01.0   4-edge      virtio0-reporting_vq
NMI:          0          0   Non-maskable interrupts
ERR:          0
`

func TestParseInterrupts(t *testing.T) {
	names, err := ParseInterrupts(strings.NewReader(interruptsText))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"timer", "virtio1-config", "virtio0-reporting_vq"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	for _, bad := range []string{"", "  0: 1 2 timer\n", "           CPU0\nnot an interrupt line\n"} {
		if _, err := ParseInterrupts(strings.NewReader(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseInterrupts(%q) err = %v, want ErrFormat", bad, err)
		}
	}
}

func TestParseLimits(t *testing.T) {
	for in, want := range map[string]int64{"max\n": -1, "-1\n": -1, "1073741824\n": 1 << 30,
		"9223372036854771712": 9223372036854771712} {
		if got, err := ParseLimit([]byte(in)); err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseLimit([]byte("lots")); !errors.Is(err, ErrFormat) {
		t.Errorf("ParseLimit(lots) err = %v, want ErrFormat", err)
	}
	for in, want := range map[string]CPUMax{"max 100000\n": {-1, 100000}, "150000 100000": {150000, 100000}} {
		if got, err := ParseCPUMax([]byte(in)); err != nil || got != want {
			t.Errorf("ParseCPUMax(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "max", "1 2 3", "max 0", "x 100000", "100 y"} {
		if _, err := ParseCPUMax([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseCPUMax(%q) err = %v, want ErrFormat", bad, err)
		}
	}
}

func TestParseFeatures(t *testing.T) {
	// The balloon of this project's guest: stats, deflate on OOM, free page reporting (bit 5), version 1 (bit 32).
	bits, err := ParseFeatures([]byte("011001010000000000000000000000001000\n"))
	if err != nil || !slices.Equal(bits, []int{1, 2, 5, 7, 32}) {
		t.Errorf("bits %v, %v", bits, err)
	}
	if _, err := ParseFeatures([]byte("01x")); !errors.Is(err, ErrFormat) {
		t.Errorf("err = %v, want ErrFormat", err)
	}
}
