package wasmproto

// The kernels, lowered to wasm the way a straightforward code generator
// lowers qd's IR: every index checked against its dimension's length (Go's
// semantics: an out-of-range index is a kernel error, returned as a code),
// float32 operations one by one (no fusion), loop bounds as parameters so
// the host can split the range among workers.

const errIndex = 1

// access pushes the address of a[ie][je] (2-D, row length m) after checking
// both indices. ie and je are emitted by the callbacks; ti, tj are scratch
// locals.
func (f *fn) access2(off, n, m, ti, tj int, ie, je func()) *fn {
	ie()
	f.tee(ti).get(n).i32geu().ifThen().i32(errIndex).ret().end()
	je()
	f.tee(tj).get(m).i32geu().ifThen().i32(errIndex).ret().end()
	f.get(off).get(ti).get(m).i32mul().get(tj).i32add().i32(2).i32shl().i32add()
	return f
}

// count emits for v = from; v < end; v++ { body }, end a local.
func (f *fn) count(v int, from func(), end int, body func()) {
	from()
	f.set(v)
	f.block().loop()
	f.get(v).get(end).i32ges().brIf(1)
	body()
	f.get(v).i32(1).i32add().set(v).br(0)
	f.end().end()
}

// saxpy(a, x, y, nx, ny, lo, hi): y[i] = a*x[i] + y[i].
func saxpyFn() *fn {
	const (
		a, x, y, nx, ny, lo, hi, i = 0, 1, 2, 3, 4, 5, 6, 7
	)
	f := &fn{name: "saxpy", params: []byte{tF32, tI32, tI32, tI32, tI32, tI32, tI32}, results: []byte{tI32}, locals: []byte{tI32}}
	f.count(i, func() { f.get(lo) }, hi, func() {
		// address of y[i] for the store
		f.get(i).get(ny).i32geu().ifThen().i32(errIndex).ret().end()
		f.get(y).get(i).i32(2).i32shl().i32add()
		f.get(a)
		f.get(i).get(nx).i32geu().ifThen().i32(errIndex).ret().end()
		f.get(x).get(i).i32(2).i32shl().i32add().f32load()
		f.f32mul()
		f.get(y).get(i).i32(2).i32shl().i32add().f32load() // y[i]: checked above
		f.f32add().f32store()
	})
	f.i32(0)
	return f
}

// heat(in, out, n, m, alpha, rlo, rhi): the demo's heat step over rows
// [rlo, rhi).
func heatFn() *fn {
	const (
		in, out, n, m, alpha, rlo, rhi = 0, 1, 2, 3, 4, 5, 6
	)
	const (
		i, j, ti, tj, c, h = 7, 8, 9, 10, 11, 12
	)
	f := &fn{name: "heat", params: []byte{tI32, tI32, tI32, tI32, tF32, tI32, tI32}, results: []byte{tI32},
		locals: []byte{tI32, tI32, tI32, tI32, tF32, tF32}}
	ld := func(di, dj int32) {
		f.access2(in, n, m, ti, tj,
			func() { f.get(i).i32(di).i32add() },
			func() { f.get(j).i32(dj).i32add() }).f32load()
	}
	f.count(i, func() { f.get(rlo) }, rhi, func() {
		f.count(j, func() { f.i32(0) }, m, func() {
			ld(0, 0)
			f.set(c)
			// i == 0 || j == 0 || i == n-1 || j == m-1 (side-effect free: no
			// short circuit needed)
			f.get(i).i32(0).i32eq().get(j).i32(0).i32eq().i32or()
			f.get(i).get(n).i32(1).i32sub().i32eq().i32or()
			f.get(j).get(m).i32(1).i32sub().i32eq().i32or()
			f.ifThen()
			f.get(c).set(h)
			f.elseOp()
			f.get(c).get(alpha)
			ld(-1, 0)
			ld(1, 0)
			f.f32add()
			ld(0, -1)
			ld(0, 1)
			f.f32add().f32add()
			f.f32(4).get(c).f32mul().f32sub()
			f.f32mul().f32add().set(h)
			f.end()
			f.access2(out, n, m, ti, tj, func() { f.get(i) }, func() { f.get(j) })
			f.get(h).f32store()
		})
	})
	f.i32(0)
	return f
}

// stencil5(in, out, n, m, rlo, rhi): over rows [rlo, rhi) of the interior
// range (n-2)×(m-2): out[i+1][j+1] = 0.5*in[i+1][j+1] + 0.125*(...).
func stencil5Fn() *fn {
	const (
		in, out, n, m, rlo, rhi = 0, 1, 2, 3, 4, 5
	)
	const (
		i, j, ti, tj, m2 = 6, 7, 8, 9, 10
	)
	f := &fn{name: "stencil5", params: []byte{tI32, tI32, tI32, tI32, tI32, tI32}, results: []byte{tI32},
		locals: []byte{tI32, tI32, tI32, tI32, tI32}}
	ld := func(di, dj int32) {
		f.access2(in, n, m, ti, tj,
			func() { f.get(i).i32(di).i32add() },
			func() { f.get(j).i32(dj).i32add() }).f32load()
	}
	f.get(m).i32(2).i32sub().set(m2)
	f.count(i, func() { f.get(rlo) }, rhi, func() {
		f.count(j, func() { f.i32(0) }, m2, func() {
			f.access2(out, n, m, ti, tj, func() { f.get(i).i32(1).i32add() }, func() { f.get(j).i32(1).i32add() })
			f.f32(0.5)
			ld(1, 1)
			f.f32mul()
			f.f32(0.125)
			ld(0, 1)
			ld(2, 1)
			f.f32add()
			ld(1, 0)
			ld(1, 2)
			f.f32add().f32add()
			f.f32mul().f32add()
			f.f32store()
		})
	})
	f.i32(0)
	return f
}

// memModule defines and exports a shared memory of pages pages.
func memModule(pages uint32) []byte {
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	var mem, exp []byte
	mem = uleb(mem, 1)
	mem = append(mem, 0x03)
	mem = uleb(mem, uint64(pages))
	mem = uleb(mem, uint64(pages))
	exp = uleb(exp, 1)
	exp = name(exp, "mem")
	exp = append(exp, 0x02, 0x00)
	out = section(out, 5, mem)
	out = section(out, 7, exp)
	return out
}

// heatHoistedFn: heat with what an optimising code generator would do
// before handing wasm to wazero: the row checks and row addresses hoisted
// out of the inner loop, the column checks kept per access.
func heatHoistedFn() *fn {
	const (
		in, out, n, m, alpha, rlo, rhi = 0, 1, 2, 3, 4, 5, 6
	)
	const (
		i, j, c, h, rowC, rowU, rowD, rowO, edge = 7, 8, 9, 10, 11, 12, 13, 14, 15
	)
	f := &fn{name: "heatH", params: []byte{tI32, tI32, tI32, tI32, tF32, tI32, tI32}, results: []byte{tI32},
		locals: []byte{tI32, tI32, tF32, tF32, tI32, tI32, tI32, tI32, tI32}}
	chkJ := func(dj int32) { // push address row + (j+dj)*4 after checking j+dj < m
		f.get(j).i32(dj).i32add().get(m).i32geu().ifThen().i32(errIndex).ret().end()
	}
	f.count(i, func() { f.get(rlo) }, rhi, func() {
		f.get(i).get(n).i32geu().ifThen().i32(errIndex).ret().end()
		f.get(in).get(i).get(m).i32mul().i32(2).i32shl().i32add().set(rowC)
		f.get(out).get(i).get(m).i32mul().i32(2).i32shl().i32add().set(rowO)
		f.get(i).i32(0).i32eq().get(i).get(n).i32(1).i32sub().i32eq().i32or().set(edge)
		f.get(rowC).get(m).i32(2).i32shl().i32sub().set(rowU)
		f.get(rowC).get(m).i32(2).i32shl().i32add().set(rowD)
		f.count(j, func() { f.i32(0) }, m, func() {
			f.get(rowC).get(j).i32(2).i32shl().i32add().f32load().set(c)
			f.get(edge).get(j).i32(0).i32eq().i32or().get(j).get(m).i32(1).i32sub().i32eq().i32or()
			f.ifThen()
			f.get(c).set(h)
			f.elseOp()
			// i-1 and i+1 are in range here (not an edge row)
			f.get(c).get(alpha)
			f.get(rowU).get(j).i32(2).i32shl().i32add().f32load()
			f.get(rowD).get(j).i32(2).i32shl().i32add().f32load()
			f.f32add()
			chkJ(-1)
			f.get(rowC).get(j).i32(1).i32sub().i32(2).i32shl().i32add().f32load()
			chkJ(1)
			f.get(rowC).get(j).i32(1).i32add().i32(2).i32shl().i32add().f32load()
			f.f32add().f32add()
			f.f32(4).get(c).f32mul().f32sub()
			f.f32mul().f32add().set(h)
			f.end()
			f.get(rowO).get(j).i32(2).i32shl().i32add().get(h).f32store()
		})
	})
	f.i32(0)
	return f
}
