package iobench

import (
	"github.com/numalab/numalab/internal/setting"
	"github.com/numalab/numalab/internal/units"
)

// CheckFlags names the flag of every value in c that parsed but that the
// probe cannot run ('numalab probe io'): --seq's block sizes, --path,
// --size and --span.
func (c Config) CheckFlags() []error {
	var errs []error
	for _, b := range c.SeqSizes {
		if !ValidBlockSize(b) {
			errs = append(errs, setting.Errorf("seq",
				"%s (%d bytes) is not a block size from 4KiB to 1MiB that divides 1MiB (try 64KiB,1MiB)", units.Bytes(b), b))
		}
	}
	if c.Dir == "" {
		errs = append(errs, setting.Errorf("path", "%q is empty (want a directory on the storage to test)", c.Dir))
	}
	if c.Size != 0 && (c.Size < MinSize || c.Size%(1<<20) != 0) {
		errs = append(errs, setting.Errorf("size", "%s (%d bytes) is not a whole number of MiB of at least %s (try 256MiB)",
			units.Bytes(c.Size), c.Size, units.Bytes(MinSize)))
	}
	if c.Span != 0 && (c.Span%(1<<20) != 0 || c.Span < c.Size) {
		errs = append(errs, setting.Errorf("span",
			"%s is not a whole number of MiB at least as large as the test file (try 8GiB)", units.Bytes(c.Span)))
	}
	return errs
}
