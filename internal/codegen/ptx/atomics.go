package ptx

import "github.com/quadrants-go/qd/internal/ir"

// atomic writes an atomic read-modify-write of an array element. The result
// register holds the old value; when the caller drops it (want == false) a
// red instruction is written where PTX has one.
//
// What PTX offers (atom.global, relaxed, gpu scope):
//
//	add       .u32 .s32 .u64 .f32 .f64 (int64 adds as .u64: same bits)
//	min, max  .s32 .u32 .s64 .u64
//	and/or/xor, exch, cas   .b32 .b64 (floats through their bits)
//
// Sub is an add of the negated value. Float min and max have no atom form:
// they are a compare-and-swap loop with Go's min/max semantics. Note that
// atom.add.f32 flushes subnormal inputs and results to zero (PTX ISA); f64
// does not. Bool arrays (bytes) have no atomics.
func (f *fnWriter) atomic(e *ir.Atomic, want bool) string {
	t := e.Type()
	if t == ir.Bool || t.IsSmall() || !t.Valid() {
		f.fail("atomic %v on an array of %v: atomics take int32, int64, uint32, uint64, float32 or float64 elements", e.Op, t)
	}
	if e.Value == nil || e.Value.Type() != t {
		f.fail("atomic %v on %s with a value that is not %v", e.Op, e.Array.Name, t)
	}
	addr, ok := f.atomicAddr(e)
	v := f.expr(e.Value)
	return f.guardedAtomic(e, addr, ok, v, want)
}

// atomicAddr is the address operand of e's element (its leaf's, in a
// record) and its in-range predicate, as checked gives them.
func (f *fnWriter) atomicAddr(e *ir.Atomic) (addr, ok string) {
	addr, ok = f.checked(e.Array, e.Index)
	return plus(addr, leafOffset(e.Array, e.Leaf)), ok
}

// guardedAtomic writes the atomic under ok; out of range its result is 0.
func (f *fnWriter) guardedAtomic(e *ir.Atomic, addr, ok, v string, want bool) string {
	if ok == "" {
		return f.atomicAt(e, addr, v, want)
	}
	t := e.Type()
	r := f.reg(t)
	f.zeroOf(t, r)
	f.guarded(ok, func() { f.mov(t, r, f.atomicAt(e, addr, v, want)) })
	return r
}

// atomicOf writes the atomic of e with value v, a register of its type
// computed already (a reduction's combined value).
func (f *fnWriter) atomicOf(e *ir.Atomic, v string, want bool) string {
	addr, ok := f.atomicAddr(e)
	return f.guardedAtomic(e, addr, ok, v, want)
}

// atomicAt writes the atomic of e at the global address operand addr
// (a register, or register+offset) with value v.
func (f *fnWriter) atomicAt(e *ir.Atomic, addrReg, v string, want bool) (r string) {
	f.in(e.Array, func() { r = f.atomicIn(e, addrReg, v, want) })
	return r
}

// atomicIn is atomicAt in the state space f.in chose.
func (f *fnWriter) atomicIn(e *ir.Atomic, addrReg, v string, want bool) string {
	t := e.Type()
	addr := "[" + addrReg + "]"
	r := f.reg(t)
	ty, bt := opType(t), bitType(t)
	switch e.Op {
	case ir.AtomicAdd, ir.AtomicSub:
		if e.Op == ir.AtomicSub {
			n := f.reg(t)
			if t.IsFloat() {
				f.emit("neg.%s %s, %s", ty, n, v)
			} else {
				f.emit("neg.s%d %s, %s", t.Bits(), n, v)
			}
			v = n
		}
		at := ty
		if t == ir.I64 {
			at = "u64"
		}
		f.rmw("add", at, r, addr, v, want)
	case ir.AtomicMin, ir.AtomicMax:
		name := map[ir.AtomicOp]ir.BinOp{ir.AtomicMin: ir.Min, ir.AtomicMax: ir.Max}[e.Op]
		if t.IsFloat() {
			f.casLoop(t, r, addr, func(old string) string { return f.floatMinMax(name, t, old, v) })
			break
		}
		f.rmw(map[ir.BinOp]string{ir.Min: "min", ir.Max: "max"}[name], ty, r, addr, v, want)
	case ir.AtomicAnd, ir.AtomicOr, ir.AtomicXor:
		if !t.IsInteger() {
			f.fail("atomic %v on %v: bitwise atomics take integers", e.Op, t)
		}
		f.rmw(e.Op.String(), bt, r, addr, v, want)
	case ir.AtomicExchange:
		f.emit("atom.%s.exch.%s %s, %s, %s", f.space(), bt, r, addr, v)
	case ir.AtomicCAS:
		if e.Compare == nil || e.Compare.Type() != t {
			f.fail("atomic cas on %s without a %v compare value", e.Array.Name, t)
		}
		// Compare is evaluated after Value (the IR's operand order); the
		// comparison is of bits, so a float NaN can match itself.
		var c string
		f.in(nil, func() { c = f.expr(e.Compare) })
		f.emit("atom.%s.cas.%s %s, %s, %s, %s", f.space(), bt, r, addr, c, v)
	default:
		f.fail("unknown atomic operation %v", e.Op)
	}
	return r
}

// rmw writes atom (or red, when the old value is unused).
func (f *fnWriter) rmw(op, ty, r, addr, v string, want bool) {
	if want {
		f.emit("atom.%s.%s.%s %s, %s, %s", f.space(), op, ty, r, addr, v)
		return
	}
	f.emit("red.%s.%s.%s %s, %s", f.space(), op, ty, addr, v)
}

// casLoop atomically replaces the element at addr by update(old) and leaves
// the old value in r:
//
//	      old = ld [addr]
//	loop: new = update(old)
//	      if bits(new) == bits(old) goto done   // nothing to write
//	      seen = atom.cas [addr], old, new
//	      if bits(seen) != bits(old) { old = seen; goto loop }
//	done: r = old
//
// Comparing bits, not float values, keeps NaN and ±0 from looping forever
// or being mistaken for each other. Returning without a write when the value
// would not change is still linearizable: the element held old at the load.
func (f *fnWriter) casLoop(t ir.Type, r, addr string, update func(old string) string) {
	bt := bitType(t)
	f.emit("ld.%s.%s %s, %s", f.space(), opType(t), r, addr)
	loop, done := f.label(), f.label()
	f.place(loop)
	nv := update(r)
	same := f.reg(ir.Bool)
	f.emit("setp.eq.%s %s, %s, %s", bt, same, nv, r)
	f.braIf(same, false, done)
	seen := f.reg(t)
	f.emit("atom.%s.cas.%s %s, %s, %s, %s", f.space(), bt, seen, addr, r, nv)
	f.emit("setp.ne.%s %s, %s, %s", bt, same, seen, r)
	f.mov(t, r, seen)
	f.braIf(same, false, loop)
	f.place(done)
}
