package cpu

import "unsafe"

// Loads and stores by quasi-affine indices (quasi.go). When every index
// of an access is uniform or has a form, and the forms share their
// segments (one w), lane k's element is at
//
//	off + (t>>w)*S + (t&(1<<w-1))*D   (t = f.ix[last]+k)
//
// where off, S and D are the indices' bases and strides weighed by the
// array's row-major strides. The batch is checked once, each dimension's
// index over its least and greatest lanes (quasi.span), and each run of
// lanes with the same t>>w moves as a copy (D = 1), a fill or a store of
// one element (D = 0), or a strided loop: a shared tile's row, a
// broadcast of its element to a row of threads, a column. A batch whose
// bases do not hold, or whose extremes fall outside the array, takes the
// general path, which checks every lane and names the index.

// quasiAcc is the quasi-affine form of an access.
type quasiAcc struct {
	a    *access
	dims []*quasi // per dimension, nil for a uniform index
	w    uint8
	last int
}

// quasiAccess is a's form, nil when an index is neither uniform nor an
// i64 with a form, or the forms' segments differ.
func (c *compiler) quasiAccess(a *access) *quasiAcc {
	if c.mode != modeRow || a.flat {
		return nil
	}
	qa := &quasiAcc{a: a, dims: make([]*quasi, a.dims), last: c.lastDim()}
	for d, ix := range a.idx {
		if ix.u != nil {
			continue
		}
		x, ok := ix.raw.(*ev[int64])
		if !ok {
			return nil
		}
		q := c.quasiOf(x)
		if q == nil {
			return nil
		}
		if q.w != 0 {
			if qa.w != 0 && qa.w != q.w {
				return nil
			}
			qa.w = q.w
		}
		qa.dims[d] = q
	}
	for d, q := range qa.dims {
		if q != nil && qa.w != 0 {
			qa.dims[d] = q.at(qa.w)
		}
	}
	return qa
}

// layout checks the active lanes of the batch and gives off, S and D in
// bytes from the array's first element (its leaf, in a record); ok is
// false when the batch takes the general path.
func (qa *quasiAcc) layout(f *frame, arr *Array) (p unsafe.Pointer, off, s, d int64, ok bool) {
	a, m := qa.a, f.m.idx
	t0, lo, hi := f.ix[qa.last], int(m[0]), int(m[len(m)-1])
	for dim := range a.dims {
		n := int64(arr.Shape[dim])
		var b, mn, mx, ds, dd int64
		if q := qa.dims[dim]; q != nil {
			if b, mn, mx, ok = q.span(f, t0, lo, hi); !ok {
				return nil, 0, 0, 0, false
			}
			ds, dd = q.s, q.d
		} else {
			if b = a.idx[dim].u(f); f.err != nil {
				return nil, 0, 0, 0, false
			}
			mn, mx = b, b
		}
		if mn < 0 || mx >= n {
			return nil, 0, 0, 0, false
		}
		off, s, d = off*n+b, s*n+ds, d*n+dd
	}
	return a.ptr(arr, 0), off * a.size, s * a.size, d * a.size, true
}

// quasiLoad fills the active lanes of d from the access's elements,
// reporting false where the batch takes the general path.
func quasiLoad[T scalar](qa *quasiAcc, f *frame, arr *Array, d []T) bool {
	p, off, s, ds, ok := qa.layout(f, arr)
	if !ok {
		return false
	}
	t0, w := f.ix[qa.last], qa.w
	at := func(e int64) *T { return (*T)(unsafe.Add(p, e)) }
	if !f.m.all {
		for _, k := range f.m.idx {
			d[k] = *at(quasiOff(off, s, ds, w, t0+int64(k)))
		}
		return true
	}
	if w == 0 {
		e := off + t0*s
		for k := range d {
			d[k] = *at(e + int64(k)*s)
		}
		return true
	}
	m := int64(1)<<w - 1
	if s == 0 && t0&m == 0 && len(d) > int(m+1) {
		// Every run of lanes reads the same elements (a tile's row for
		// every row of threads): the first run, then copies of it.
		run := d[:m+1]
		for j := range run {
			run[j] = *at(off + int64(j)*ds)
		}
		for done := len(run); done < len(d); done *= 2 {
			copy(d[done:], d[:done])
		}
		return true
	}
	if run := int(m + 1); ds == 0 && t0&m == 0 && len(d)%run == 0 && fillRuns(d, unsafe.Add(p, off+(t0>>w)*s), s, run) {
		return true // each run of threads one element: a broadcast per run
	}
	for k := 0; k < len(d); {
		t := t0 + int64(k)
		r := t & m
		seg := min(int(m-r+1), len(d)-k)
		e, dst := off+(t>>w)*s+r*ds, d[k:k+seg]
		switch ds {
		case int64(unsafe.Sizeof(dst[0])):
			copy(dst, unsafe.Slice(at(e), seg))
		case 0:
			if v := *at(e); seg >= 8 {
				fill(dst, v)
			} else {
				for j := range dst {
					dst[j] = v
				}
			}
		default:
			for j := range dst {
				dst[j] = *at(e + int64(j)*ds)
			}
		}
		k += seg
	}
	return true
}

// quasiStore is quasiLoad's store of v, lane by lane in order (the last
// lane to write an element wins).
func quasiStore[T scalar](qa *quasiAcc, f *frame, arr *Array, v []T) bool {
	p, off, s, ds, ok := qa.layout(f, arr)
	if !ok {
		return false
	}
	t0, w := f.ix[qa.last], qa.w
	at := func(e int64) *T { return (*T)(unsafe.Add(p, e)) }
	if !f.m.all {
		for _, k := range f.m.idx {
			*at(quasiOff(off, s, ds, w, t0+int64(k))) = v[k]
		}
		return true
	}
	v = v[:f.n]
	if w == 0 {
		e := off + t0*s
		for k := range v {
			*at(e + int64(k)*s) = v[k]
		}
		return true
	}
	m := int64(1)<<w - 1
	for k := 0; k < len(v); {
		t := t0 + int64(k)
		r := t & m
		seg := min(int(m-r+1), len(v)-k)
		e, src := off+(t>>w)*s+r*ds, v[k:k+seg]
		switch ds {
		case int64(unsafe.Sizeof(src[0])):
			copy(unsafe.Slice(at(e), seg), src)
		case 0:
			*at(e) = src[seg-1]
		default:
			for j := range src {
				*at(e + int64(j)*ds) = src[j]
			}
		}
		k += seg
	}
	return true
}

// quasiOff is the byte offset of index t's element.
func quasiOff(off, s, d int64, w uint8, t int64) int64 {
	if w == 0 {
		return off + t*s
	}
	return off + (t>>w)*s + (t&(int64(1)<<w-1))*d
}

// quasiStores is the store of T by a quasi-affine access, nil when a has
// no form: it stores v, or falls back to scatter.
func quasiStores[T scalar](c *compiler, a *access, scatter func(*frame, *Array, []T)) func(*frame, *Array, []T) {
	qa := c.quasiAccess(a)
	if qa == nil {
		return nil
	}
	return func(f *frame, arr *Array, v []T) {
		if !quasiStore(qa, f, arr, v) && f.err == nil {
			scatter(f, arr, v)
		}
	}
}

// fillRuns fills each run of n lanes of d with the element at src plus
// the run's number times stride bytes, as SSE2 stores (simd_gen.go);
// false where there are none for T, or n lanes are not a multiple of 16
// bytes.
func fillRuns[T scalar](d []T, src unsafe.Pointer, stride int64, n int) bool {
	var z T
	p := unsafe.Pointer(unsafe.SliceData(d))
	switch size := int(unsafe.Sizeof(z)); {
	case n*size%16 != 0:
		return false
	case size == 4 && simdFillRuns32 != nil:
		simdFillRuns32(unsafe.Slice((*uint32)(p), len(d)), src, stride, n)
		return true
	case size == 8 && simdFillRuns64 != nil:
		simdFillRuns64(unsafe.Slice((*uint64)(p), len(d)), src, stride, n)
		return true
	}
	return false
}
