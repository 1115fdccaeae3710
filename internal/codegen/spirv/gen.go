package spirv

import (
	"errors"
	"fmt"
	"slices"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// ErrUnsupported is wrapped by Generate's refusal of a construct this
// generator does not compile yet; the error names the construct and its
// position.
var ErrUnsupported = errors.New("not supported by the Vulkan code generator yet")

// Options say what the device offers and what the launch wants.
type Options struct {
	// Bounds: every array index is checked (qd.WithDebug), as kabi's
	// Options.Bounds.
	Bounds bool
	// AtomicFloatAdd32 and AtomicFloatAdd64: the device adds floats
	// atomically in buffers (VK_EXT_shader_atomic_float); otherwise an
	// atomic float add is a compare-and-swap loop.
	AtomicFloatAdd32, AtomicFloatAdd64 bool
	// MaxPushBytes is the device's push-constant space
	// (maxPushConstantsSize; Vulkan promises 128 bytes). A task whose
	// slots need more takes them from an arguments buffer instead, whose
	// device address is its one push constant (Entry.ArgsBuffer).
	MaxPushBytes int
	// ExactFMA: the device's fma is fused (FMAProbe), so float64
	// division and square root are corrected to be correctly rounded;
	// without it they are the device's own.
	ExactFMA bool
	// SubgroupReduce: the device has subgroup arithmetic in compute
	// shaders, with which combined reductions leave one atomic per
	// subgroup (reduce.go).
	SubgroupReduce bool
	// BlockSize is the size of the blocks of block tasks whose size the
	// launch computes (kabi.Task.BlockDim 0); 0 leaves those tasks out
	// (Entry.Deferred), to be generated again for the size a launch asks.
	BlockSize int
}

// Kernel is a lowered kernel compiled for Vulkan: its layout and one
// module per task.
type Kernel struct {
	Layout  *kabi.Module
	Entries []*Entry
}

// Entry is the compute shader of one task.
type Entry struct {
	Task *kabi.Task
	// Words is the SPIR-V module; its one entry point is EntryName.
	Words []uint32
	// Push is where each of the task's slots sits in the push constants;
	// PushBytes is their size.
	Push      []PushField
	PushBytes int
	// LocalSize is the work group's size (x; y and z are 1).
	LocalSize int
	// ArgsBuffer: the slots, laid out as Push says, are read from a
	// buffer whose device address is pushed as the one 8-byte push
	// constant, because they do not fit in the device's push constants.
	ArgsBuffer bool
	// Deferred: a block task whose size the launch computes, generated
	// without Options.BlockSize: Words is nil; Generate again with the
	// size for its module.
	Deferred bool
}

// EntryName is the name of every module's entry point.
const EntryName = "main"

// PushField is one slot of an entry's push constants.
type PushField struct {
	Slot   kabi.Slot
	Offset int
}

// Generate compiles plan. Every task becomes a module of its own, whose
// parameters (kabi's slots) arrive as push constants.
func Generate(plan *lower.Plan, opts Options) (*Kernel, error) {
	layout, err := kabi.LayoutWith(plan, kabi.Options{Bounds: opts.Bounds})
	if err != nil {
		return nil, err
	}
	k := &Kernel{Layout: layout}
	for i, t := range plan.Tasks {
		e, err := generateTask(plan, t, layout, &layout.Tasks[i], opts)
		if err != nil {
			return nil, err
		}
		k.Entries = append(k.Entries, e)
	}
	return k, nil
}

// genError is raised (panicked) inside the recursive writer and turned
// back into Generate's error, as in go/parser.
type genError struct{ err error }

// gen writes the module of one task.
type gen struct {
	m      *Module
	f      *Function
	plan   *lower.Plan
	task   *lower.Task
	info   *kabi.Task
	layout *kabi.Module
	opts   Options
	pos    ir.Pos

	push       ID                // the push-constant variable
	pushMember map[kabi.Slot]int // slot → member index
	pushType   []ID              // slot types
	pushOffset []int             // slot offsets
	argsBuffer bool              // the slots come from an arguments buffer
	slotVal    map[kabi.Slot]ID  // slot values loaded in the prologue
	interfaces []ID

	wgID, localID, numWG ID // the builtins (uvec3 inputs)

	vars    map[*ir.Var]ID
	tempIn  []*ir.Var
	tempOut map[*ir.Var]bool
	serial  bool

	proEnd int // where the prologue ends in the body's words

	mathFuncs      map[string]ID // devmath functions written into the module
	reduced        map[*ir.Atomic]*reduction
	scalarBuiltins map[uint32]ID

	loops   []*loopCtx
	escape  ID // the i32 local labelled breaks and continues leave through
	nescape int

	// Block tasks (blocks.go): the group's size, the shared arrays, the
	// pointers into them (loads and stores through them take no
	// alignment), and the collectives' scratch per element type.
	local64    int
	shared     map[*ir.Param]*sharedVar
	sharedPtrs map[ID]bool
	scratches  map[ir.Type][2]ID
}

func (g *gen) fail(format string, args ...any) {
	panic(genError{ir.Errorf(g.pos, g.plan.Kernel.Name, "spirv: "+format, args...)})
}

func (g *gen) unsupported(what string) {
	panic(genError{fmt.Errorf("%w: %w", ErrUnsupported, ir.Errorf(g.pos, g.plan.Kernel.Name, "%s", what))})
}

func generateTask(plan *lower.Plan, t *lower.Task, layout *kabi.Module, info *kabi.Task, opts Options) (e *Entry, err error) {
	g := &gen{
		m:    NewModule(AddressingModelPhysicalStorageBuffer64, MemoryModelGLSL450),
		plan: plan, task: t, info: info, layout: layout, opts: opts,
		pushMember: map[kabi.Slot]int{}, slotVal: map[kabi.Slot]ID{},
		vars: map[*ir.Var]ID{}, tempOut: map[*ir.Var]bool{}, serial: t.Kind == lower.Serial,
		pos: t.Pos,
	}
	defer func() {
		if r := recover(); r != nil {
			ge, ok := r.(genError)
			if !ok {
				panic(r)
			}
			e, err = nil, ge.err
		}
	}()
	m := g.m
	m.Capability(CapabilityShader)
	m.Capability(CapabilityPhysicalStorageBufferAddresses)
	m.Capability(CapabilityInt64)

	local := info.BlockDim
	switch t.Kind {
	case lower.Serial:
		local = 1
	case lower.Parallel:
	case lower.Block:
		if t.Blocks == nil {
			g.fail("block task %d has no loop", t.Index)
		}
		if local == 0 {
			local = opts.BlockSize
			if local == 0 {
				return &Entry{Task: info, Deferred: true}, nil
			}
		}
	default:
		g.fail("task %d has unknown kind %v", t.Index, t.Kind)
	}
	e = &Entry{Task: info, LocalSize: local}
	g.pushConstants(e)
	g.builtins()

	fnID := m.ID()
	void := m.Void()
	g.f = m.NewFunction(fnID, void, m.FuncType(void))
	g.prologue()
	g.proEnd = len(g.f.body)
	switch t.Kind {
	case lower.Serial:
		g.serialTask()
	case lower.Parallel:
		if t.Loop == nil {
			g.fail("parallel task %d has no loop", t.Index)
		}
		g.parallelTask(t.Loop, local)
	case lower.Block:
		g.blockTask(t.Blocks, local)
	}
	if !g.f.Terminated {
		g.f.Return()
	}
	g.loadTemps()
	m.AddFunction(g.f)
	m.EntryPoint(ExecutionModelGLCompute, fnID, EntryName, g.interfaces...)
	m.ExecutionMode(fnID, ExecutionModeLocalSize, uint32(local), 1, 1)
	// Go's floats have signed zeros, infinities, NaNs and subnormals:
	// every width the module uses keeps them.
	m.Capability(CapabilitySignedZeroInfNanPreserve)
	m.Capability(CapabilityDenormPreserve)
	widths := []uint32{32}
	if m.hasCap[CapabilityFloat64] {
		widths = append(widths, 64)
	}
	for _, w := range widths {
		m.ExecutionMode(fnID, ExecutionModeSignedZeroInfNanPreserve, w)
		m.ExecutionMode(fnID, ExecutionModeDenormPreserve, w)
	}
	m.Name(fnID, info.Entry)
	e.Words = m.Words()
	return e, nil
}

// typ is the SPIR-V type of a value of t. Integer types carry no
// signedness: the instructions choose it. The 8- and 16-bit integers are
// 32-bit values, sign- or zero-extended from their own bits (norm keeps
// them so after every operation that can leave their range), and only
// memory holds them in 8 or 16 bits: NVIDIA's driver (580) does not wrap
// arithmetic on 8-bit SPIR-V types (-(-128) gave 128).
func (g *gen) typ(t ir.Type) ID {
	switch t {
	case ir.Bool:
		return g.m.Bool()
	case ir.F32:
		return g.m.Float(32)
	case ir.F64:
		return g.m.Float(64)
	}
	if !t.IsInteger() {
		g.fail("value of invalid type %v", t)
	}
	return g.m.Int(regBits(t))
}

// regBits is the width of t's values: 32 for the small integers.
func regBits(t ir.Type) int {
	if t.IsSmall() {
		return 32
	}
	return t.Bits()
}

// norm makes x, a 32-bit value of small integer type t, canonical again:
// its low bits sign- or zero-extended. Other types pass unchanged.
func (g *gen) norm(t ir.Type, x ID) ID {
	if !t.IsSmall() {
		return x
	}
	f, u32 := g.f, g.m.Int(32)
	if t.IsUnsigned() {
		return f.Op(OpBitwiseAnd, u32, x, g.m.ConstInt(32, 1<<t.Bits()-1))
	}
	shift := g.m.ConstInt(32, uint64(32-t.Bits()))
	return f.Op(OpShiftRightArithmetic, u32, f.Op(OpShiftLeftLogical, u32, x, shift), shift)
}

// memTyp is the type of t in memory: bools are bytes holding 0 or 1.
func (g *gen) memTyp(t ir.Type) ID {
	if t == ir.Bool {
		g.storage8()
		return g.m.Int(8)
	}
	switch t.Bits() {
	case 8:
		g.storage8()
		return g.m.Int(8)
	case 16:
		g.m.Capability(CapabilityStorageBuffer16BitAccess)
		return g.m.Int(16)
	}
	return g.typ(t)
}

func (g *gen) storage8() {
	g.m.Capability(CapabilityStorageBuffer8BitAccess)
	g.m.Extension("SPV_KHR_8bit_storage")
}

// pushConstants lays the task's slots out as one push-constant block, each
// at an offset aligned to its size, in the layout's order.
func (g *gen) pushConstants(e *Entry) {
	m := g.m
	off := 0
	var members []ID
	for i, s := range g.info.Slots {
		size := s.Size
		if size != 4 && size != 8 {
			g.fail("slot %v of %d bytes", s.Kind, size)
		}
		off = (off + size - 1) &^ (size - 1)
		e.Push = append(e.Push, PushField{Slot: s, Offset: off})
		g.pushOffset = append(g.pushOffset, off)
		g.pushMember[slotKey(s)] = i
		t := m.Int(8 * size)
		members = append(members, t)
		off += size
	}
	e.PushBytes = off
	g.pushType = members
	if len(members) == 0 {
		return
	}
	if limit := g.opts.MaxPushBytes; limit > 0 && off > limit {
		// One push constant: the arguments buffer's address.
		e.ArgsBuffer = true
		members = []ID{m.Int(64)}
	}
	g.argsBuffer = e.ArgsBuffer
	st := m.Struct(members...)
	m.Decorate(st, DecorationBlock)
	for i := range members {
		off := 0
		if !e.ArgsBuffer {
			off = e.Push[i].Offset
		}
		m.MemberDecorate(st, i, DecorationOffset, uint32(off))
	}
	g.push = m.Global(m.Pointer(StorageClassPushConstant, st), StorageClassPushConstant)
	m.Name(g.push, "args")
	g.interfaces = append(g.interfaces, g.push)
}

// slotKey is a slot as a map key: its kind, parameter and dimension.
func slotKey(s kabi.Slot) kabi.Slot { return kabi.Slot{Kind: s.Kind, Param: s.Param, Dim: s.Dim} }

// builtins declares the work-group id, the invocation's id in its group
// and the number of groups.
func (g *gen) builtins() {
	m := g.m
	v3 := m.Vector(m.Int(32), 3)
	ptr := m.Pointer(StorageClassInput, v3)
	mk := func(b uint32, name string) ID {
		id := m.Global(ptr, StorageClassInput)
		m.Decorate(id, DecorationBuiltIn, b)
		m.Name(id, name)
		g.interfaces = append(g.interfaces, id)
		return id
	}
	g.wgID = mk(BuiltInWorkgroupId, "gl_WorkGroupID")
	g.localID = mk(BuiltInLocalInvocationId, "gl_LocalInvocationID")
	g.numWG = mk(BuiltInNumWorkgroups, "gl_NumWorkGroups")
}

// builtin declares a scalar u32 input builtin (SubgroupId,
// NumSubgroups) once and returns its variable.
func (g *gen) builtin(b uint32, name string) ID {
	if id, ok := g.scalarBuiltins[b]; ok {
		return id
	}
	m := g.m
	id := m.Global(m.Pointer(StorageClassInput, m.Int(32)), StorageClassInput)
	m.Decorate(id, DecorationBuiltIn, b)
	m.Name(id, name)
	g.interfaces = append(g.interfaces, id)
	if g.scalarBuiltins == nil {
		g.scalarBuiltins = map[uint32]ID{}
	}
	g.scalarBuiltins[b] = id
	return id
}

// builtinX is the x component of a builtin, as a u32.
func (g *gen) builtinX(b ID) ID {
	m := g.m
	v := g.f.Op(OpLoad, m.Vector(m.Int(32), 3), b)
	return g.f.Op(OpCompositeExtract, m.Int(32), v, 0)
}

// prologue loads every slot once, at the entry's start: from the push
// constants, or from the arguments buffer they point at.
func (g *gen) prologue() {
	if g.argsBuffer {
		i64 := g.m.Int(64)
		ptr := g.f.Op(OpAccessChain, g.m.Pointer(StorageClassPushConstant, i64), g.push, g.m.ConstInt(32, 0))
		base := g.f.Op(OpLoad, i64, ptr)
		for i, p := range g.info.Slots {
			t := g.pushType[i]
			addr := g.f.Op(OpIAdd, i64, base, g.m.ConstInt(64, uint64(g.pushOffset[i])))
			at := g.f.Op(OpConvertUToPtr, g.m.Pointer(StorageClassPhysicalStorageBuffer, t), addr)
			g.slotVal[slotKey(p)] = g.f.Op(OpLoad, t, at, MemoryAccessAligned, uint32(p.Size))
		}
		return
	}
	for i, p := range g.info.Slots {
		ptr := g.f.Op(OpAccessChain, g.m.Pointer(StorageClassPushConstant, g.pushType[i]), g.push, g.m.ConstInt(32, uint64(i)))
		g.slotVal[slotKey(p)] = g.f.Op(OpLoad, g.pushType[i], ptr)
	}
}

// slot is the loaded value of a slot (a 32- or 64-bit integer), checking
// that the layout has it.
func (g *gen) slot(s kabi.Slot, what string) ID {
	v, ok := g.slotVal[slotKey(s)]
	if !ok {
		g.fail("internal error: %s missing from the layout of %s", what, g.info.Entry)
	}
	return v
}

// scalar is the value of scalar parameter p: its slot's bits as p's type.
func (g *gen) scalar(p *ir.Param) ID {
	raw := g.slot(kabi.Slot{Kind: kabi.ScalarSlot, Param: p.Index}, "scalar "+p.Name)
	switch t := p.Elem; {
	case t == ir.Bool:
		return g.f.Op(OpINotEqual, g.m.Bool(), raw, g.m.ConstInt(32, 0))
	case t.IsFloat():
		return g.f.Op(OpBitcast, g.typ(t), raw)
	case t.IsSmall():
		return g.norm(t, raw) // the slot's low bits
	}
	return raw
}

// arrayAddr is the device address of array p's first element (u64).
func (g *gen) arrayAddr(p *ir.Param) ID {
	if p.IsShared() {
		g.fail("shared array %s has no device address", p.Name)
	}
	return g.slot(kabi.Slot{Kind: kabi.ArraySlot, Param: p.Index}, "array "+p.Name)
}

// dim is extent d of array p (i64).
func (g *gen) dim(p *ir.Param, d int) ID {
	if d < 0 || d >= p.Dims {
		g.fail("dimension %d of %s, which has %d", d, p.Name, p.Dims)
	}
	if p.IsShared() {
		return g.m.ConstInt(64, uint64(p.Shared[d]))
	}
	return g.slot(kabi.Slot{Kind: kabi.DimSlot, Param: p.Index, Dim: d}, fmt.Sprintf("extent %d of %s", d, p.Name))
}

// Locals are Function-storage variables, read and written with OpLoad and
// OpStore; the drivers' compilers promote them to registers. Locals that
// live across tasks (plan.TempSlot) sit in the launch's temporaries
// buffer, 8 bytes a slot, in their natural width (bools as one byte): the
// entry copies the ones it touches in at its start, a serial task writes
// back those it set at its end, a parallel one at each assignment, as the
// other GPU generators do.

func (g *gen) local(v *ir.Var, declaring bool) ID {
	if id, ok := g.vars[v]; ok {
		return id
	}
	if !v.Type.Valid() {
		g.fail("local %s has invalid type %v", v.Name, v.Type)
	}
	_, cross := g.plan.TempSlot[v]
	if !declaring && !cross {
		g.fail("local %s is used before its declaration in this task and is not a per-launch temporary", v.Name)
	}
	id := g.f.Var(g.typ(v.Type))
	g.m.Name(id, v.Name)
	g.vars[v] = id
	if cross {
		g.tempIn = append(g.tempIn, v)
	}
	return id
}

func (g *gen) set(v *ir.Var, value ID, declaring bool) {
	g.f.Void(OpStore, g.local(v, declaring), value)
	if _, cross := g.plan.TempSlot[v]; !cross {
		return
	}
	if g.serial {
		g.tempOut[v] = true
		return
	}
	g.writeTemp(v)
}

// tempPtr is a pointer to v's slot in the temporaries.
func (g *gen) tempPtr(v *ir.Var) ID {
	temps := g.slot(kabi.Slot{Kind: kabi.TempsSlot}, "the temporaries")
	addr := g.f.Op(OpIAdd, g.m.Int(64), temps, g.m.ConstInt(64, uint64(8*g.plan.TempSlot[v])))
	return g.f.Op(OpConvertUToPtr, g.m.Pointer(StorageClassPhysicalStorageBuffer, g.memTyp(v.Type)), addr)
}

func (g *gen) writeTemp(v *ir.Var) {
	val := g.f.Op(OpLoad, g.typ(v.Type), g.vars[v])
	g.storeAt(g.tempPtr(v), v.Type, val)
}

// loadTemps writes, at the end of the prologue, the loads of the
// temporaries the task touched (known only once its body is written).
func (g *gen) loadTemps() {
	body := g.f.body
	g.f.body = slices.Clone(body[:g.proEnd])
	for _, v := range g.tempIn {
		val := g.loadAt(g.tempPtr(v), v.Type)
		g.f.Void(OpStore, g.vars[v], val)
	}
	g.f.body = append(g.f.body, body[g.proEnd:]...)
}

// loadAt and storeAt read and write a value of type t through a
// PhysicalStorageBuffer pointer to its memory type, naturally aligned.
func (g *gen) loadAt(ptr ID, t ir.Type) ID {
	if g.sharedPtrs[ptr] {
		x := g.f.Op(OpLoad, g.sharedTyp(t), ptr)
		if t == ir.Bool {
			return g.f.Op(OpINotEqual, g.m.Bool(), x, g.m.ConstInt(32, 0))
		}
		return x
	}
	mt := g.memTyp(t)
	x := g.f.Op(OpLoad, mt, ptr, MemoryAccessAligned, uint32(max(t.Size(), 1)))
	switch {
	case t == ir.Bool:
		return g.f.Op(OpINotEqual, g.m.Bool(), x, g.m.ConstInt(8, 0))
	case t.IsSigned() && t.IsSmall():
		return g.f.Op(OpSConvert, g.typ(t), x)
	case t.IsSmall():
		return g.f.Op(OpUConvert, g.typ(t), x)
	}
	return x
}

func (g *gen) storeAt(ptr ID, t ir.Type, val ID) {
	if g.sharedPtrs[ptr] {
		if t == ir.Bool {
			val = g.f.Op(OpSelect, g.m.Int(32), val, g.m.ConstInt(32, 1), g.m.ConstInt(32, 0))
		}
		g.f.Void(OpStore, ptr, val)
		return
	}
	if t == ir.Bool {
		val = g.f.Op(OpSelect, g.m.Int(8), val, g.m.ConstInt(8, 1), g.m.ConstInt(8, 0))
	}
	if t.IsSmall() {
		val = g.f.Op(OpUConvert, g.memTyp(t), val) // the low bits
	}
	g.f.Void(OpStore, ptr, val, MemoryAccessAligned, uint32(max(t.Size(), 1)))
}

// serialTask runs the statements on one invocation, then writes back the
// temporaries it set.
func (g *gen) serialTask() {
	m, f := g.m, g.f
	u32 := m.Int(32)
	any := f.Op(OpBitwiseOr, u32, g.builtinX(g.wgID), g.builtinX(g.localID))
	g.ifThen(f.Op(OpINotEqual, m.Bool(), any, m.ConstInt(32, 0)), func() { f.Return() })
	g.stmts(g.task.Body)
	g.pos = g.task.Pos
	if f.Terminated {
		return
	}
	out := make([]*ir.Var, 0, len(g.tempOut))
	for v := range g.tempOut {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *ir.Var) int { return g.plan.TempSlot[a] - g.plan.TempSlot[b] })
	for _, v := range out {
		g.writeTemp(v)
	}
}

// parallelTask writes the grid-stride loop of a parallel task over the
// row-major flattening of its 1 to 3 extents, as the other GPU generators
// do: the extents are evaluated once as int64 (an extent ≤ 0 runs
// nothing); each invocation starts at group·size + local and steps by
// groups·size, in 64-bit arithmetic.
func (g *gen) parallelTask(l *ir.ParallelFor, local int) {
	m, f := g.m, g.f
	g.pos = l.Pos
	n := len(l.Extents)
	if n == 0 || n > 3 || len(l.Vars) != n {
		g.fail("parallel loop: want 1 to 3 integer extents, each with a variable")
	}
	i64, b := m.Int(64), m.Bool()
	ext := make([]ID, n)
	for d, e := range l.Extents {
		if e == nil || !e.Type().IsInteger() || l.Vars[d].Type != e.Type() {
			g.fail("parallel loop dimension %d: want an integer extent with a variable of its type", d)
		}
		ext[d] = g.index64(e)
	}
	empty := f.Op(OpSLessThanEqual, b, ext[0], m.ConstInt(64, 0))
	for d := 1; d < n; d++ {
		empty = f.Op(OpLogicalOr, b, empty, f.Op(OpSLessThanEqual, b, ext[d], m.ConstInt(64, 0)))
	}
	g.ifThen(empty, func() { f.Return() })
	total := ext[0]
	for d := 1; d < n; d++ {
		total = f.Op(OpIMul, i64, total, ext[d])
	}
	size := m.ConstInt(64, uint64(local))
	stride := f.Op(OpIMul, i64, f.Op(OpUConvert, i64, g.builtinX(g.numWG)), size)
	start := f.Op(OpIAdd, i64, f.Op(OpIMul, i64, f.Op(OpUConvert, i64, g.builtinX(g.wgID)), size),
		f.Op(OpUConvert, i64, g.builtinX(g.localID)))
	idx := f.Var(i64)
	m.Name(idx, "flat")
	f.Void(OpStore, idx, start)
	vars := make([]ID, n)
	for d, v := range l.Vars {
		vars[d] = g.local(v, true)
	}
	g.setupReductions()
	g.loop(nil, func() ID {
		i := f.Op(OpLoad, i64, idx)
		return f.Op(OpULessThan, b, i, total)
	}, func() {
		rest := f.Op(OpLoad, i64, idx)
		for d := n - 1; d >= 0; d-- {
			val := rest
			if d > 0 {
				// rest - (rest/ext)*ext, not OpUMod: with OpUMod, NVIDIA's
				// driver (580) gave the last index + 1 as 1 in every
				// invocation of a 3-D loop (in[i][j][k+1] read
				// in[i][j][1]; TestNDRangeAccesses).
				q := f.Op(OpUDiv, i64, rest, ext[d])
				val = f.Op(OpISub, i64, rest, f.Op(OpIMul, i64, q, ext[d]))
				rest = q
			}
			if t := l.Vars[d].Type; t.Bits() != 64 {
				val = g.norm(t, f.Op(OpUConvert, g.typ(t), val))
			}
			f.Void(OpStore, vars[d], val)
		}
		g.stmts(l.Body)
	}, func() {
		f.Void(OpStore, idx, f.Op(OpIAdd, i64, f.Op(OpLoad, i64, idx), stride))
	})
	g.finishReductions()
}
