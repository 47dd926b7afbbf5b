package iobench

// StoredConfig is a probe's configuration as its run stores it.
type StoredConfig struct {
	Dir      string `json:"dir"`
	Size     int64  `json:"size"` // 0 = chosen from the free space
	Duration string `json:"duration"`
	Quick    bool   `json:"quick"`
	Depths   []int  `json:"depths"`
	SeqSizes []int  `json:"seq_sizes"`
	SeqQD    int    `json:"seq_qd"`
	MixQD    int    `json:"mix_qd"`
	MixRead  int    `json:"mix_read_pct"`
	Readers  int    `json:"readers,omitempty"`
	Span     int64  `json:"span,omitempty"`
	Buffered bool   `json:"buffered"`
	Seed     uint64 `json:"seed"`
}

// Stored is c as its run stores it; quick says that c began as
// QuickConfig.
func (c Config) Stored(quick bool) StoredConfig {
	return StoredConfig{
		Dir: c.Dir, Size: c.Size, Duration: c.Duration.String(), Quick: quick, Depths: c.Depths,
		SeqSizes: c.SeqSizes, SeqQD: c.SeqQD, MixQD: c.MixQD, MixRead: c.MixRead, Readers: c.Readers, Span: c.Span,
		Buffered: c.Buffered, Seed: c.Seed,
	}
}
