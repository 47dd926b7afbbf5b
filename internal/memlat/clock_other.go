//go:build !amd64

package memlat

// addChain runs n iterations of 16 dependent integer adds. Off amd64 it is
// plain Go: the compiler keeps the adds as a dependent chain, but whether
// each takes one cycle is the CPU's business, so GHz is approximate there.
func addChain(n int) int {
	x := 0
	for ; n > 0; n-- {
		x += n
		x ^= n
		x += n
		x ^= n
		x += n
		x ^= n
		x += n
		x ^= n
		x += n
		x ^= n
		x += n
		x ^= n
		x += n
		x ^= n
		x += n
		x ^= n
	}
	return x
}
