package memlat

// addChain runs n iterations of 16 dependent one-cycle integer adds (in
// clock_amd64.s) and returns 16·n, so the loop cannot be skipped.
func addChain(n int) int
