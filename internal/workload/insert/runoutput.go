package insert

// Stats are the load figures of the cells measured, what 'run insert
// --json' prints (an empty list when none was).
func Stats(ms []*Measured) []CellStats {
	out := []CellStats{}
	for _, m := range ms {
		out = append(out, m.Stats)
	}
	return out
}
