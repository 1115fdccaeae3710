package ptx

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// Registers are virtual: every value gets a fresh numbered register of its
// class and every local one register of its own for its whole life. ptxas
// allocates physical registers, so this stays digestible for large kernels.
type regClass uint8

const (
	predReg regClass = iota
	b32Reg
	b64Reg
	f32Reg
	f64Reg
	numRegClasses
)

var (
	regPrefix = [numRegClasses]string{"%p", "%r", "%rd", "%f", "%fd"}
	regDecl   = [numRegClasses]string{".pred", ".b32", ".b64", ".f32", ".f64"}
)

// classOf is the register class of t. The 8- and 16-bit integers live in
// 32-bit registers, canonical: sign-extended (int8, int16) or
// zero-extended (uint8, uint16) from their own width, so that a value is
// its own widening to 32 bits and every conversion from it is one
// instruction or none (expr.go's convert keeps the form).
func classOf(t ir.Type) regClass {
	switch t {
	case ir.Bool:
		return predReg
	case ir.I32, ir.U32, ir.I8, ir.I16, ir.U8, ir.U16:
		return b32Reg
	case ir.I64, ir.U64:
		return b64Reg
	case ir.F32:
		return f32Reg
	case ir.F64:
		return f64Reg
	}
	panic(fmt.Sprintf("ptx: no register class for type %v", t))
}

// opType is the PTX type suffix of arithmetic on t: s32, u64, f32, ...
// (that of the 32-bit register an 8- or 16-bit value lives in).
func opType(t ir.Type) string {
	switch t {
	case ir.I32, ir.I8, ir.I16:
		return "s32"
	case ir.U32, ir.U8, ir.U16:
		return "u32"
	case ir.I64:
		return "s64"
	case ir.U64:
		return "u64"
	case ir.F32:
		return "f32"
	case ir.F64:
		return "f64"
	case ir.Bool:
		return "pred"
	}
	panic(fmt.Sprintf("ptx: no PTX type for %v", t))
}

// bitType is the untyped PTX suffix of t's register: b32 or b64 (pred for
// Bool).
func bitType(t ir.Type) string {
	switch {
	case t.Size() == 4 || t.IsSmall():
		return "b32"
	case t.Size() == 8:
		return "b64"
	}
	return "pred"
}

// memType is the PTX type of t in memory: bools are bytes, and the 8- and
// 16-bit integers their own width (a load sign- or zero-extends into the
// 32-bit register, a store keeps the low bits).
func memType(t ir.Type) string {
	switch t {
	case ir.Bool, ir.U8:
		return "u8"
	case ir.I8:
		return "s8"
	case ir.I16:
		return "s16"
	case ir.U16:
		return "u16"
	}
	return opType(t)
}

// literal writes the constant bits of type t as a PTX literal: floats as
// their exact bit patterns (0f/0d), integers as hexadecimal of their width.
func literal(t ir.Type, bits uint64) string {
	switch t {
	case ir.F32:
		return fmt.Sprintf("0f%08X", uint32(bits))
	case ir.F64:
		return fmt.Sprintf("0d%016X", bits)
	case ir.Bool:
		if bits != 0 {
			return "1"
		}
		return "0"
	}
	if t.Size() == 4 || t.IsSmall() {
		return fmt.Sprintf("0x%08X", uint32(bits)) // a small value's register form
	}
	return fmt.Sprintf("0x%016X", bits)
}

func f32Bits(v float32) uint64 { return uint64(math.Float32bits(v)) }

// bailout carries a compile error out of the recursive emitter, as go/parser
// does; compile recovers it.
type bailout struct{ err error }

// maxThreadsPerSM is the fewest resident threads a multiprocessor of any
// target qd writes PTX for holds (sm_86 and sm_89: 1536).
const maxThreadsPerSM = 1536

// fnWriter writes the .entry of one task.
type fnWriter struct {
	m      *modWriter
	task   *lower.Task
	info   *kabi.Task // the entry's layout: its name and parameter slots
	k      *ir.Kernel
	serial bool

	body   *strings.Builder
	nreg   [numRegClasses]int
	nlabel int
	pos    ir.Pos // of the statement being written, for errors

	vars    map[*ir.Var]string // register of each local
	scalars map[int]string     // scalar parameter → register
	arrays  map[int]string     // array parameter → global address register
	dims    map[[2]int]string  // (parameter, dim) → int64 register
	temps   string             // global address of the temporaries, once used
	tempIn  []*ir.Var          // temporaries read or written, in first-use order
	tempOut map[*ir.Var]bool   // temporaries a serial task writes back at its end

	loops   []loopLabels
	parNext string // label of the next parallel iteration (continue), "" outside

	aff      *affinePlan         // the multi-dimensional parallel body being written (affine.go)
	ser      *serialPlan         // the unrolled serial trip being written (serialunroll.go)
	vec      *vectorPlan         // the vector loop being written, nil elsewhere
	vecCopy  int                 // which of its elements the body is written for
	hoisted  map[*ir.Load]string // loads a row chunk issued first (chunkloads.go)
	ldHint   string              // qualifiers of the loads being written, after ld.global
	unrolled bool                // the entry has an unrolled serial loop (serialunroll.go)

	red      map[*ir.ExprStmt]*accumulator // whole-range reductions of the task
	redOrder []*accumulator                // the same, in task order
	shared   []string                      // .shared declarations of the entry
	mem      string                        // "shared" while a shared array's access is written (space)
}

type loopLabels struct {
	loop      *ir.For
	cont, brk string
}

func newFunc(m *modWriter, task *lower.Task, info *kabi.Task) *fnWriter {
	return &fnWriter{
		m:       m,
		task:    task,
		info:    info,
		k:       m.plan.Kernel,
		serial:  task.Kind == lower.Serial,
		body:    new(strings.Builder),
		vars:    map[*ir.Var]string{},
		scalars: map[int]string{},
		arrays:  map[int]string{},
		dims:    map[[2]int]string{},
		tempOut: map[*ir.Var]bool{},
	}
}

// fail stops compilation of the kernel with a positioned error.
func (f *fnWriter) fail(format string, args ...any) {
	panic(bailout{f.m.errorf(f.pos, format, args...)})
}

func (f *fnWriter) reg(t ir.Type) string {
	c := classOf(t)
	f.nreg[c]++
	return fmt.Sprintf("%s%d", regPrefix[c], f.nreg[c])
}

func (f *fnWriter) label() string {
	f.nlabel++
	return fmt.Sprintf("$L%d", f.nlabel)
}

// emit writes one instruction; the format has no trailing semicolon.
func (f *fnWriter) emit(format string, args ...any) {
	f.body.WriteByte('\t')
	fmt.Fprintf(f.body, format, args...)
	f.body.WriteString(";\n")
}

func (f *fnWriter) place(label string) { f.body.WriteString(label + ":\n") }

func (f *fnWriter) bra(label string) { f.emit("bra.uni %s", label) }

// braIf branches to label when p holds (or, with neg, when it does not).
func (f *fnWriter) braIf(p string, neg bool, label string) {
	if neg {
		f.emit("@!%s bra %s", p, label)
	} else {
		f.emit("@%s bra %s", p, label)
	}
}

// mov copies src into dst, both of type t.
func (f *fnWriter) mov(t ir.Type, dst, src string) {
	if dst != src {
		f.emit("mov.%s %s, %s", movType(t), dst, src)
	}
}

func movType(t ir.Type) string {
	if t.IsFloat() || t == ir.Bool {
		return opType(t)
	}
	return bitType(t)
}

// constant materialises a constant in a fresh register; ptxas folds it.
func (f *fnWriter) constant(t ir.Type, bits uint64) string {
	r := f.reg(t)
	f.emit("mov.%s %s, %s", movType(t), r, literal(t, bits))
	return r
}

// Parameters are loaded lazily: the first use of a parameter allocates its
// register and compile writes the loads at the top of the entry. The
// entry's .param list is the layout's (kabi.Layout read it off the IR); a
// use the layout lacks is an internal error, caught here rather than at
// launch.

func (f *fnWriter) hasSlot(k kabi.SlotKind, param, dim int) bool {
	for _, s := range f.info.Slots {
		if s.Kind == k && s.Param == param && s.Dim == dim {
			return true
		}
	}
	return false
}

func (f *fnWriter) need(k kabi.SlotKind, p *ir.Param, dim int) {
	if !f.hasSlot(k, p.Index, dim) {
		f.fail("internal error: %s slot of parameter %s (dim %d) missing from the layout of %s", k, p.Name, dim, f.info.Entry)
	}
}

func (f *fnWriter) scalar(p *ir.Param) string {
	if r, ok := f.scalars[p.Index]; ok {
		return r
	}
	f.need(kabi.ScalarSlot, p, 0)
	r := f.reg(p.Elem)
	f.scalars[p.Index] = r
	return r
}

func (f *fnWriter) array(p *ir.Param) string {
	if r, ok := f.arrays[p.Index]; ok {
		return r
	}
	f.need(kabi.ArraySlot, p, 0)
	r := f.reg(ir.I64)
	f.arrays[p.Index] = r
	return r
}

func (f *fnWriter) dim(p *ir.Param, d int) string {
	if d < 0 || d >= p.Dims {
		f.fail("dimension %d of %s, which has %d", d, p.Name, p.Dims)
	}
	key := [2]int{p.Index, d}
	if r, ok := f.dims[key]; ok {
		return r
	}
	f.need(kabi.DimSlot, p, d)
	r := f.reg(ir.I64)
	f.dims[key] = r
	return r
}

// Locals that live across tasks (plan.TempSlot) are kept in registers too:
// loaded from the temporaries buffer at entry, and written back at the end
// of a serial task, or at each assignment in a parallel one (where they are
// read-only in any race-free program).

func (f *fnWriter) tempSlot(v *ir.Var) (int, bool) {
	s, ok := f.m.plan.TempSlot[v]
	return s, ok
}

// varReg is the register of local v.
func (f *fnWriter) varReg(v *ir.Var) string {
	if r, ok := f.vars[v]; ok {
		return r
	}
	if _, ok := f.tempSlot(v); ok {
		r := f.reg(v.Type)
		f.vars[v] = r
		f.tempIn = append(f.tempIn, v)
		if f.temps == "" {
			f.temps = f.reg(ir.I64)
		}
		return r
	}
	f.fail("local %s is used before its declaration in this task and is not a per-launch temporary", v.Name)
	return ""
}

// declare gives local v a register, or the one it has: a declaration inside
// a loop runs once per iteration on the same register.
func (f *fnWriter) declare(v *ir.Var) string {
	if !v.Type.Valid() {
		f.fail("local %s has invalid type %v", v.Name, v.Type)
	}
	if r, ok := f.vars[v]; ok {
		return r
	}
	if _, ok := f.tempSlot(v); ok {
		return f.varReg(v)
	}
	r := f.reg(v.Type)
	f.vars[v] = r
	return r
}

// wrote notes that local v was just set.
func (f *fnWriter) wrote(v *ir.Var) {
	slot, ok := f.tempSlot(v)
	if !ok {
		return
	}
	if f.serial {
		f.tempOut[v] = true
		return
	}
	f.storeTemp(v, slot)
}

func (f *fnWriter) storeTemp(v *ir.Var, slot int) {
	f.store(v.Type, fmt.Sprintf("[%s+%d]", f.temps, 8*slot), f.vars[v])
}

// store writes value (a register of type t) to the address operand addr.
func (f *fnWriter) store(t ir.Type, addr, value string) {
	if t == ir.Bool {
		b := f.reg(ir.U32)
		f.emit("selp.u32 %s, 1, 0, %s", b, value)
		value = b
	}
	f.emit("st.%s.%s %s, %s", f.space(), memType(t), addr, value)
}

// space is the state space of the memory access being written: global,
// or shared while an access of a block's shared array is (f.mem).
func (f *fnWriter) space() string {
	if f.mem != "" {
		return f.mem
	}
	return "global"
}

// in runs write with the accesses it writes in a's state space.
func (f *fnWriter) in(a *ir.Param, write func()) {
	saved := f.mem
	f.mem = ""
	if a != nil && a.IsShared() {
		f.mem = "shared"
	}
	write()
	f.mem = saved
}

// loadInto reads a value of type t from the address operand addr into dst.
func (f *fnWriter) loadInto(t ir.Type, dst, addr string) {
	if t == ir.Bool {
		b := f.reg(ir.U32)
		f.emit("ld.%s.u8 %s, %s", f.space(), b, addr)
		f.emit("setp.ne.u32 %s, %s, 0", dst, b)
		return
	}
	if f.mem == "shared" {
		f.emit("ld.shared.%s %s, %s", memType(t), dst, addr)
		return
	}
	f.emit("ld.global%s.%s %s, %s", f.ldHint, memType(t), dst, addr)
}

// compile writes the entry.
func (f *fnWriter) compile() (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			err = b.err
		}
	}()
	f.pos = f.task.Pos
	exit := "$Lexit"
	switch f.task.Kind {
	case lower.Serial:
		f.serialBody(exit)
	case lower.Parallel:
		if f.task.Loop == nil {
			f.fail("parallel task %d has no loop", f.task.Index)
		}
		f.parallelLoop(f.task.Loop, exit)
	case lower.Block:
		if f.task.Blocks == nil {
			f.fail("block task %d has no loop", f.task.Index)
		}
		f.blockLoop(f.task.Blocks, exit)
	default:
		f.fail("task %d has unknown kind %v", f.task.Index, f.task.Kind)
	}
	prologue := f.prologue()

	var sb strings.Builder
	fmt.Fprintf(&sb, "// task %d: %s", f.task.Index, f.task.Kind)
	if f.task.Pos.IsKnown() {
		fmt.Fprintf(&sb, " at %s", f.task.Pos)
	}
	fmt.Fprintf(&sb, "\n.visible .entry %s(", f.info.Entry)
	for i, p := range prologue.decls {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString("\n\t" + p)
	}
	sb.WriteString("\n)\n")
	if f.info.BlockDim > 0 { // 0: a block loop sized at launch
		fmt.Fprintf(&sb, ".maxntid %d, 1, 1\n", f.info.BlockDim)
	}
	if f.unrolled && !f.serial && f.info.BlockDim > 0 {
		// No more blocks than the fewest threads a multiprocessor of any
		// target holds (1536 on sm_86 and sm_89) allows, or ptxas refuses.
		fmt.Fprintf(&sb, ".minnctapersm %d\n", max(1, min(unrolledCTAs, maxThreadsPerSM/f.info.BlockDim)))
	}
	sb.WriteString("{\n")
	for c := range numRegClasses {
		if f.nreg[c] > 0 {
			fmt.Fprintf(&sb, "\t.reg %s %s<%d>;\n", regDecl[c], regPrefix[c], f.nreg[c]+1)
		}
	}
	for _, d := range f.shared {
		sb.WriteString("\t" + d + "\n")
	}
	sb.WriteString("\n")
	if f.m.layout.AwaitsPredecessors {
		// Programmatic dependent launch (target.go): wait for the
		// grids before this one, then let the next one start.
		sb.WriteString("\tgriddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;\n")
	}
	sb.WriteString(prologue.code)
	sb.WriteString(f.body.String())
	sb.WriteString(exit + ":\n\tret;\n}\n")
	return sb.String(), nil
}

type prologue struct {
	decls []string // .param declarations
	code  string   // loads of the parameters and temporaries
}

// prologue declares the layout's parameters, in its order, and loads the
// ones the body used.
func (f *fnWriter) prologue() prologue {
	var pr prologue
	var code strings.Builder
	ld := func(format string, args ...any) {
		code.WriteByte('\t')
		fmt.Fprintf(&code, format, args...)
		code.WriteString(";\n")
	}
	params := f.k.Params
	for _, s := range f.info.Slots {
		switch s.Kind {
		case kabi.ScalarSlot:
			p := params[s.Param]
			name := fmt.Sprintf("s%d", p.Index)
			r, used := f.scalars[p.Index]
			if p.Elem == ir.Bool {
				pr.decls = append(pr.decls, ".param .u32 "+name)
				if used {
					b := f.reg(ir.U32)
					ld("ld.param.u32 %s, [%s]", b, name)
					ld("setp.ne.u32 %s, %s, 0", r, b)
				}
				continue
			}
			pr.decls = append(pr.decls, fmt.Sprintf(".param .%s %s", opType(p.Elem), name))
			if used {
				ld("ld.param.%s %s, [%s]", opType(p.Elem), r, name)
				if p.Elem.IsSmall() {
					// The slot's value is extended to 32 bits (kabi.ScalarSlot);
					// its own bits are made the register's canonical form
					// whatever the launcher left above them.
					ld("%s", canonical(p.Elem, r, r))
				}
			}
		case kabi.ArraySlot:
			name := fmt.Sprintf("a%d", s.Param)
			pr.decls = append(pr.decls, ".param .u64 "+name)
			if r, used := f.arrays[s.Param]; used {
				g := f.reg(ir.U64)
				ld("ld.param.u64 %s, [%s]", g, name)
				ld("cvta.to.global.u64 %s, %s", r, g)
			}
		case kabi.DimSlot:
			name := fmt.Sprintf("a%d_d%d", s.Param, s.Dim)
			pr.decls = append(pr.decls, ".param .s64 "+name)
			if r, used := f.dims[[2]int{s.Param, s.Dim}]; used {
				ld("ld.param.s64 %s, [%s]", r, name)
			}
		case kabi.TempsSlot:
			pr.decls = append(pr.decls, ".param .u64 temps")
			if f.temps == "" {
				continue
			}
			g := f.reg(ir.U64)
			ld("ld.param.u64 %s, [temps]", g)
			ld("cvta.to.global.u64 %s, %s", f.temps, g)
			// Load every temporary the task touches; for one the task
			// declares first the load is dead and ptxas drops it.
			saved := f.body
			f.body = new(strings.Builder)
			for _, v := range f.tempIn {
				slot, _ := f.tempSlot(v)
				f.loadInto(v.Type, f.vars[v], fmt.Sprintf("[%s+%d]", f.temps, 8*slot))
			}
			code.WriteString(f.body.String())
			f.body = saved
		}
	}
	if f.temps != "" && !f.hasSlot(kabi.TempsSlot, 0, 0) {
		f.fail("internal error: the temporaries are missing from the layout of %s", f.info.Entry)
	}
	pr.code = code.String()
	return pr
}

// serialBody writes a serial task: one thread runs the statements, then
// writes back the temporaries it set. Extra threads, should the launch have
// any, leave at once.
func (f *fnWriter) serialBody(exit string) {
	tid, ctaid := f.reg(ir.U32), f.reg(ir.U32)
	f.emit("mov.u32 %s, %%tid.x", tid)
	f.emit("mov.u32 %s, %%ctaid.x", ctaid)
	f.emit("or.b32 %s, %s, %s", tid, tid, ctaid)
	extra := f.reg(ir.Bool)
	f.emit("setp.ne.u32 %s, %s, 0", extra, tid)
	f.braIf(extra, false, exit)
	f.stmts(f.task.Body)
	f.pos = f.task.Pos
	vars := make([]*ir.Var, 0, len(f.tempOut))
	for v := range f.tempOut {
		vars = append(vars, v)
	}
	slices.SortFunc(vars, func(a, b *ir.Var) int {
		sa, _ := f.tempSlot(a)
		sb, _ := f.tempSlot(b)
		return sa - sb
	})
	for _, v := range vars {
		slot, _ := f.tempSlot(v)
		f.storeTemp(v, slot)
	}
}
