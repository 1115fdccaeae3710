package spirv

import (
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
)

// Arrays arrive as 64-bit device addresses (Vulkan's buffer device
// address): an element is read and written through a PhysicalStorageBuffer
// pointer made from base + offset·size (+ the leaf's offset in a record),
// in wrapping int64 arithmetic as the other GPU generators compute it.
//
// Index checks (a layout with Bounds, qd.WithDebug) are the other GPU
// generators': every index is compared, as an unsigned 64-bit number (so a
// negative one is out of range too), with its extent; an access out of
// range does not happen (a load gives zero, a store or an atomic is
// skipped), and the first of the launch is recorded in the violation
// record kabi.DebugWords words after the temporaries, elected by a
// compare-and-swap of word 0 from 0 to its site number + 1.

// element returns a pointer to leaf of a[index...] and, when indices are
// checked, the bool that holds when they are all in range (0 otherwise).
func (g *gen) element(a *ir.Param, index []ir.Expr, leaf int) (ptr, ok ID) {
	if !a.IsArray() || len(index) != a.Dims {
		g.fail("array %s (%d dims) indexed with %d indices", a.Name, a.Dims, len(index))
	}
	f, m := g.f, g.m
	i64, b := m.Int(64), m.Bool()
	idx := make([]ID, len(index))
	for d, e := range index {
		idx[d] = g.index64(e)
	}
	if g.layout != nil && g.layout.Bounds {
		site := g.layout.AddSite(a, index, g.pos)
		okVar := f.Var(b)
		f.Void(OpStore, okVar, m.ConstBool(true))
		for d := range idx {
			ext := g.dim(a, d)
			out := f.Op(OpUGreaterThanEqual, b, idx[d], ext)
			g.ifThen(out, func() {
				g.recordViolation(site, idx[d], ext, d)
				f.Void(OpStore, okVar, m.ConstBool(false))
			})
		}
		ok = f.Op(OpLoad, b, okVar)
	}
	off := idx[0]
	for d := 1; d < len(idx); d++ {
		off = f.Op(OpIAdd, i64, f.Op(OpIMul, i64, off, g.dim(a, d)), idx[d])
	}
	t := a.LeafType(leaf)
	if a.IsShared() {
		return g.sharedElement(a, off, leaf), ok
	}
	size := t.Size()
	if a.Rec != nil {
		size = a.Rec.Size
	}
	addr := f.Op(OpIAdd, i64, g.arrayAddr(a), f.Op(OpIMul, i64, off, m.ConstInt(64, uint64(size))))
	if a.Rec != nil && a.LeafOffset(leaf) != 0 {
		addr = f.Op(OpIAdd, i64, addr, m.ConstInt(64, uint64(a.LeafOffset(leaf))))
	}
	return f.Op(OpConvertUToPtr, m.Pointer(StorageClassPhysicalStorageBuffer, g.memTyp(t)), addr), ok
}

// recordViolation writes the first index out of range of the launch into
// the violation record.
func (g *gen) recordViolation(site int, index, extent ID, dim int) {
	f, m := g.f, g.m
	i64 := m.Int(64)
	m.Capability(CapabilityInt64Atomics)
	temps := g.slot(kabi.Slot{Kind: kabi.TempsSlot}, "the temporaries")
	word := func(w int) ID {
		addr := f.Op(OpIAdd, i64, temps, m.ConstInt(64, uint64(8*(g.layout.NumTemps+w))))
		return f.Op(OpConvertUToPtr, m.Pointer(StorageClassPhysicalStorageBuffer, i64), addr)
	}
	old := f.Op(OpAtomicCompareExchange, i64, word(0), g.scope(), g.relaxed(), g.relaxed(),
		m.ConstInt(64, uint64(site+1)), m.ConstInt(64, 0))
	g.ifThen(f.Op(OpIEqual, m.Bool(), old, m.ConstInt(64, 0)), func() {
		for w, v := range []ID{index, extent, m.ConstInt(64, uint64(dim))} {
			f.Void(OpStore, word(w+1), v, MemoryAccessAligned, 8)
		}
	})
}

// scope and relaxed are the atomics' scope (the device) and memory
// semantics (relaxed, as PTX's atom and C's qd_atomic).
func (g *gen) scope() ID   { return g.m.ConstInt(32, ScopeDevice) }
func (g *gen) relaxed() ID { return g.m.ConstInt(32, MemorySemanticsRelaxed) }

// atomic writes an atomic read-modify-write of an array element and
// returns the old value (0 when want is false and none is computed).
// Signed and unsigned integers share the instructions but for min and
// max; float add is the device's (VK_EXT_shader_atomic_float) where it
// has it, else a compare-and-swap loop, as float min and max always are
// (Go's min and max). Exchange and compare-and-swap work on the bits, so
// a float NaN can match itself. Bool arrays (bytes) and the 8- and 16-bit
// integers have no atomics.
func (g *gen) atomic(e *ir.Atomic, want bool) ID {
	t := e.Type()
	switch {
	case !t.IsNumeric() || t.IsSmall():
		g.fail("atomic %v on %s, an array of %v: atomics need numeric elements", e.Op, e.Array.Name, t)
	case e.Value == nil || e.Value.Type() != t:
		g.fail("atomic %v on %s, an array of %v, needs a %v value", e.Op, e.Array.Name, t, t)
	}
	ptr, ok := g.element(e.Array, e.Index, e.Leaf)
	v := g.expr(e.Value)
	var c ID
	if e.Op == ir.AtomicCAS {
		if e.Compare == nil || e.Compare.Type() != t {
			g.fail("atomic cas on %s without a %v compare value", e.Array.Name, t)
		}
		c = g.expr(e.Compare) // after Value: the IR's operand order
	}
	if ok == 0 {
		return g.atomicAt(e, t, ptr, v, c)
	}
	f := g.f
	r := f.Var(g.typ(t))
	f.Void(OpStore, r, g.zero(t))
	g.ifThen(ok, func() { f.Void(OpStore, r, g.atomicAt(e, t, ptr, v, c)) })
	return f.Op(OpLoad, g.typ(t), r)
}

func (g *gen) atomicAt(e *ir.Atomic, t ir.Type, ptr, v, c ID) ID {
	f, m := g.f, g.m
	ty := g.typ(t)
	if t.Bits() == 64 {
		m.Capability(CapabilityInt64Atomics)
	}
	if t.IsFloat() {
		return g.floatAtomic(e, t, ptr, v, c)
	}
	sc, rel := g.scope(), g.relaxed()
	op := map[ir.AtomicOp]uint32{ir.AtomicAdd: OpAtomicIAdd, ir.AtomicSub: OpAtomicISub,
		ir.AtomicAnd: OpAtomicAnd, ir.AtomicOr: OpAtomicOr, ir.AtomicXor: OpAtomicXor,
		ir.AtomicExchange: OpAtomicExchange}
	switch e.Op {
	case ir.AtomicMin, ir.AtomicMax:
		code := map[bool][2]uint32{true: {OpAtomicSMin, OpAtomicSMax}, false: {OpAtomicUMin, OpAtomicUMax}}[t.IsSigned()]
		i := 0
		if e.Op == ir.AtomicMax {
			i = 1
		}
		return f.Op(code[i], ty, ptr, sc, rel, v)
	case ir.AtomicCAS:
		return f.Op(OpAtomicCompareExchange, ty, ptr, sc, rel, rel, v, c)
	}
	code, ok := op[e.Op]
	if !ok {
		g.fail("unknown atomic operation %v", e.Op)
	}
	return f.Op(code, ty, ptr, sc, rel, v)
}

// floatAtomic writes the float atomics: add and sub through the device's
// float add when it has one, exchange and compare-and-swap on the bits,
// and the rest as a compare-and-swap loop on the bits.
func (g *gen) floatAtomic(e *ir.Atomic, t ir.Type, ptr, v, c ID) ID {
	f, m := g.f, g.m
	ty, it := g.typ(t), m.Int(t.Bits())
	sc, rel := g.scope(), g.relaxed()
	shared := g.sharedPtrs[ptr]
	class := uint32(StorageClassPhysicalStorageBuffer)
	if shared {
		class = StorageClassWorkgroup
	}
	iptr := f.Op(OpBitcast, m.Pointer(class, it), ptr)
	if shared {
		g.sharedPtrs[iptr] = true
	}
	switch e.Op {
	case ir.AtomicExchange:
		old := f.Op(OpAtomicExchange, it, iptr, sc, rel, f.Op(OpBitcast, it, v))
		return f.Op(OpBitcast, ty, old)
	case ir.AtomicCAS:
		old := f.Op(OpAtomicCompareExchange, it, iptr, sc, rel, rel, f.Op(OpBitcast, it, v), f.Op(OpBitcast, it, c))
		return f.Op(OpBitcast, ty, old)
	case ir.AtomicAdd, ir.AtomicSub:
		if e.Op == ir.AtomicSub {
			v = g.negateFloat(t, v)
		}
		if !shared && ((t == ir.F32 && g.opts.AtomicFloatAdd32) || (t == ir.F64 && g.opts.AtomicFloatAdd64)) {
			m.Extension("SPV_EXT_shader_atomic_float_add")
			if t == ir.F32 {
				m.Capability(CapabilityAtomicFloat32AddEXT)
			} else {
				m.Capability(CapabilityAtomicFloat64AddEXT)
			}
			return f.Op(OpAtomicFAddEXT, ty, ptr, sc, rel, v)
		}
		return g.casLoop(t, iptr, func(old ID) ID {
			r := f.Op(OpFAdd, ty, old, v)
			m.Decorate(r, DecorationNoContraction)
			return r
		})
	case ir.AtomicMin, ir.AtomicMax:
		return g.casLoop(t, iptr, func(old ID) ID { return g.minMaxFloat(e.Op == ir.AtomicMin, t, old, v) })
	}
	g.fail("atomic %v on %s: bitwise atomics take integers", e.Op, e.Array.Name)
	return 0
}

// casLoop applies update to the float at iptr (a pointer to its bits)
// atomically, retrying while another invocation changed it in between,
// and returns the old value.
func (g *gen) casLoop(t ir.Type, iptr ID, update func(old ID) ID) ID {
	f, m := g.f, g.m
	ty, it := g.typ(t), m.Int(t.Bits())
	sc, rel := g.scope(), g.relaxed()
	cur := f.Var(it)
	if g.sharedPtrs[iptr] {
		f.Void(OpStore, cur, f.Op(OpLoad, it, iptr))
	} else {
		f.Void(OpStore, cur, f.Op(OpLoad, it, iptr, MemoryAccessAligned, uint32(t.Size())))
	}
	g.loop(nil, nil, func() {
		bits := f.Op(OpLoad, it, cur)
		next := f.Op(OpBitcast, it, update(f.Op(OpBitcast, ty, bits)))
		seen := f.Op(OpAtomicCompareExchange, it, iptr, sc, rel, rel, next, bits)
		done := f.Op(OpIEqual, m.Bool(), seen, bits)
		l := g.loops[len(g.loops)-1]
		f.Void(OpStore, cur, seen)
		g.ifThen(done, func() {
			l.broken = true
			f.Branch(l.merge)
		})
	}, func() {})
	return f.Op(OpBitcast, ty, f.Op(OpLoad, it, cur))
}
