package memlat

import "unsafe"

// The chase loops follow pointers written by buildChain. Each load's
// address is the previous load's value, so loads cannot overlap: the time
// per load is the load-to-use latency. The pointers live in mmap'd memory
// outside the Go heap; they are read as unsafe.Pointer (the same machine
// load as a uintptr, and the GC ignores pointers to memory it does not own).
// Loops are unrolled 16 times so that loop overhead runs in the shadow of
// the loads; callers pass n as a multiple of 16.

// chase1 follows one chain for n loads and returns where it stopped.
func chase1(p unsafe.Pointer, n int) unsafe.Pointer {
	for ; n > 0; n -= 16 {
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
		p = *(*unsafe.Pointer)(p)
	}
	return p
}

// chase2 follows two independent chains, interleaved, n loads each.
func chase2(ps *[16]unsafe.Pointer, n int) {
	a, b := ps[0], ps[1]
	for ; n > 0; n -= 4 {
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
	}
	ps[0], ps[1] = a, b
}

// chase4 follows four independent chains, n loads each.
func chase4(ps *[16]unsafe.Pointer, n int) {
	a, b, c, d := ps[0], ps[1], ps[2], ps[3]
	for ; n > 0; n -= 2 {
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
		c = *(*unsafe.Pointer)(c)
		d = *(*unsafe.Pointer)(d)
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
		c = *(*unsafe.Pointer)(c)
		d = *(*unsafe.Pointer)(d)
	}
	ps[0], ps[1], ps[2], ps[3] = a, b, c, d
}

// chase8 follows eight independent chains, n loads each.
func chase8(ps *[16]unsafe.Pointer, n int) {
	a, b, c, d := ps[0], ps[1], ps[2], ps[3]
	e, f, g, h := ps[4], ps[5], ps[6], ps[7]
	for ; n > 0; n-- {
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
		c = *(*unsafe.Pointer)(c)
		d = *(*unsafe.Pointer)(d)
		e = *(*unsafe.Pointer)(e)
		f = *(*unsafe.Pointer)(f)
		g = *(*unsafe.Pointer)(g)
		h = *(*unsafe.Pointer)(h)
	}
	ps[0], ps[1], ps[2], ps[3] = a, b, c, d
	ps[4], ps[5], ps[6], ps[7] = e, f, g, h
}

// chase16 follows sixteen independent chains, n loads each. With 16 live
// pointers plus the counter the compiler may spill a few to the stack; the
// spills hit L1 and overlap with the misses.
func chase16(ps *[16]unsafe.Pointer, n int) {
	a, b, c, d := ps[0], ps[1], ps[2], ps[3]
	e, f, g, h := ps[4], ps[5], ps[6], ps[7]
	i, j, k, l := ps[8], ps[9], ps[10], ps[11]
	m, o, q, r := ps[12], ps[13], ps[14], ps[15]
	for ; n > 0; n-- {
		a = *(*unsafe.Pointer)(a)
		b = *(*unsafe.Pointer)(b)
		c = *(*unsafe.Pointer)(c)
		d = *(*unsafe.Pointer)(d)
		e = *(*unsafe.Pointer)(e)
		f = *(*unsafe.Pointer)(f)
		g = *(*unsafe.Pointer)(g)
		h = *(*unsafe.Pointer)(h)
		i = *(*unsafe.Pointer)(i)
		j = *(*unsafe.Pointer)(j)
		k = *(*unsafe.Pointer)(k)
		l = *(*unsafe.Pointer)(l)
		m = *(*unsafe.Pointer)(m)
		o = *(*unsafe.Pointer)(o)
		q = *(*unsafe.Pointer)(q)
		r = *(*unsafe.Pointer)(r)
	}
	ps[0], ps[1], ps[2], ps[3] = a, b, c, d
	ps[4], ps[5], ps[6], ps[7] = e, f, g, h
	ps[8], ps[9], ps[10], ps[11] = i, j, k, l
	ps[12], ps[13], ps[14], ps[15] = m, o, q, r
}

// chaseK follows k (1, 2, 4, 8 or 16) interleaved chains starting at
// ps[0:k], n loads each (n a multiple of 16), and leaves them in ps.
func chaseK(ps *[16]unsafe.Pointer, k, n int) {
	switch k {
	case 1:
		ps[0] = chase1(ps[0], n)
	case 2:
		chase2(ps, n)
	case 4:
		chase4(ps, n)
	case 8:
		chase8(ps, n)
	case 16:
		chase16(ps, n)
	default:
		panic("memlat: chaseK wants 1, 2, 4, 8 or 16 chains")
	}
}

// readSum reads n 8-byte words sequentially from p and returns their sum,
// with eight independent accumulators so the loads are not serialised.
func readSum(p unsafe.Pointer, n int) uint64 {
	var s0, s1, s2, s3, s4, s5, s6, s7 uint64
	w := unsafe.Slice((*uint64)(p), n)
	for len(w) >= 8 {
		s0 += w[0]
		s1 += w[1]
		s2 += w[2]
		s3 += w[3]
		s4 += w[4]
		s5 += w[5]
		s6 += w[6]
		s7 += w[7]
		w = w[8:]
	}
	return s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
}
