package drive

import (
	"github.com/numalab/numalab/internal/result"
	"github.com/numalab/numalab/internal/sysmon"
)

// SysMonitor watches the machine below root ("/" here) with package
// sysmon during each measured window.
func SysMonitor(root string) StartMonitor {
	return func() (func() (*result.Usage, error), error) {
		s, err := sysmon.Start(root)
		if err != nil {
			return nil, err
		}
		return func() (*result.Usage, error) {
			u, err := s.Stop()
			if err != nil {
				return nil, err
			}
			return &u, nil
		}, nil
	}
}
