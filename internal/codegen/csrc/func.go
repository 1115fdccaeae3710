package csrc

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// cType is the C type of a value of t; memType that of an array element
// (bools are bytes in memory).
func cType(t ir.Type) string {
	if t == ir.Bool {
		return "bool"
	}
	return cTypes[t.String()]
}

func memType(t ir.Type) string {
	if t == ir.Bool {
		return "unsigned char"
	}
	return cType(t)
}

// compileError is raised (panicked) inside a function writer and turned
// back into the error of compile: the emitter is recursive and an error can
// arise at any depth, as in go/parser.
type compileError struct{ err error }

// fn writes the entry of one task.
//
// Every value lives in a C local declared at the top of the entry (the
// kernel's locals, then the temporaries expressions are computed into),
// and every expression is computed into a fresh temporary, operands before
// the operation: C leaves the order of evaluation of operands unspecified,
// Go fixes it left to right, and the difference shows as soon as an
// operand is an atomic. With nothing declared mid-block, every goto (break,
// continue) is also free to jump anywhere.
type fn struct {
	u      *Unit
	plan   *lower.Plan
	task   *lower.Task
	info   *kabi.Task
	layout *kabi.Module // the module's: its Sites grow as checked accesses are written
	serial bool
	pos    ir.Pos // of the statement being written, for errors

	body   strings.Builder
	indent int
	decls  map[string][]string // C type → names, declared at the top
	ntemp  int
	nlabel int

	vars    map[*ir.Var]string
	tempIn  []*ir.Var        // cross-task locals the task touches, in first-use order
	tempOut map[*ir.Var]bool // those a serial task writes back at its end

	loops   []loop
	reduced map[*ir.Atomic]*reduction // the task's combined atomics (reduce.go)
	blk     *blockState               // a block task's loop (blocks.go)
}

// loop is an enclosing serial loop and the labels break and continue go to.
type loop struct {
	stmt      *ir.For
	cont, brk string
}

func newFunc(u *Unit, plan *lower.Plan, task *lower.Task, layout *kabi.Module, info *kabi.Task) *fn {
	return &fn{
		u: u, plan: plan, task: task, info: info, layout: layout, serial: task.Kind == lower.Serial,
		decls: map[string][]string{}, vars: map[*ir.Var]string{}, tempOut: map[*ir.Var]bool{},
		indent: 1,
	}
}

func (f *fn) fail(format string, args ...any) {
	panic(compileError{ir.Errorf(f.pos, f.plan.Kernel.Name, "csrc: "+format, args...)})
}

// line writes one line of the body at the current indentation.
func (f *fn) line(format string, args ...any) {
	f.body.WriteString(strings.Repeat("\t", f.indent))
	fmt.Fprintf(&f.body, format, args...)
	f.body.WriteByte('\n')
}

func (f *fn) label(name string) { fmt.Fprintf(&f.body, "%s:;\n", name) }

func (f *fn) newLabel() string {
	f.nlabel++
	return fmt.Sprintf("L%d", f.nlabel)
}

// declare adds a local of C type ct named name to the entry's declarations.
func (f *fn) declare(ct, name string) string {
	f.decls[ct] = append(f.decls[ct], name)
	return name
}

// tmp computes a value of type t into a fresh temporary and returns its name.
func (f *fn) tmp(t ir.Type, format string, args ...any) string {
	f.ntemp++
	name := f.declare(cType(t), fmt.Sprintf("t%d", f.ntemp))
	f.line("%s = %s;", name, fmt.Sprintf(format, args...))
	return name
}

// slot returns the C name of a parameter slot, checking that the layout
// has it: a use the layout lacks is an internal error caught here, not a
// fault at launch.
func (f *fn) slot(s kabi.Slot, what string) string {
	if !slices.ContainsFunc(f.info.Slots, func(have kabi.Slot) bool {
		return have.Kind == s.Kind && have.Param == s.Param && have.Dim == s.Dim
	}) {
		f.fail("internal error: %s missing from the layout of %s", what, f.info.Entry)
	}
	return slotName(s)
}

func slotName(s kabi.Slot) string {
	switch s.Kind {
	case kabi.ScalarSlot:
		return fmt.Sprintf("s%d", s.Param)
	case kabi.ArraySlot:
		return fmt.Sprintf("a%d", s.Param)
	case kabi.DimSlot:
		return fmt.Sprintf("a%d_d%d", s.Param, s.Dim)
	}
	return "temps"
}

// scalar is the value of a scalar parameter (bools arrive as 0 or 1 in 32
// bits).
func (f *fn) scalar(p *ir.Param) string {
	name := f.slot(kabi.Slot{Kind: kabi.ScalarSlot, Param: p.Index}, "scalar "+p.Name)
	if p.Elem == ir.Bool {
		return "(" + name + " != 0u)"
	}
	if p.Elem.IsSmall() {
		return "((" + cType(p.Elem) + ")" + name + ")" // the slot's low bits (values.go)
	}
	return name
}

func (f *fn) array(p *ir.Param) string {
	if p.IsShared() {
		return f.sharedBase(p)
	}
	return f.slot(kabi.Slot{Kind: kabi.ArraySlot, Param: p.Index}, "array "+p.Name)
}

func (f *fn) dim(p *ir.Param, d int) string {
	if d < 0 || d >= p.Dims {
		f.fail("dimension %d of %s, which has %d", d, p.Name, p.Dims)
	}
	if p.IsShared() {
		return literal(ir.I64, uint64(p.Shared[d])) // a shared array's extents are constants
	}
	return f.slot(kabi.Slot{Kind: kabi.DimSlot, Param: p.Index, Dim: d}, fmt.Sprintf("extent %d of %s", d, p.Name))
}

// Locals that live across tasks (plan.TempSlot) sit in the launch's
// temporaries buffer, 8 bytes a slot at offset 8·slot, in their natural
// width (bools as one byte 0 or 1). The entry copies the ones it touches
// into locals at its start; a serial task writes back those it set at its
// end, a parallel one at each assignment (read-only there in any race-free
// kernel).

func (f *fn) tempAddr(v *ir.Var) string {
	slot := f.plan.TempSlot[v]
	f.slot(kabi.Slot{Kind: kabi.TempsSlot}, "the temporaries")
	return fmt.Sprintf("*(%s *)(temps + %d)", memType(v.Type), 8*slot)
}

// local returns the C name of local v, declaring it on first sight.
func (f *fn) local(v *ir.Var, declaring bool) string {
	if name, ok := f.vars[v]; ok {
		return name
	}
	if !v.Type.Valid() {
		f.fail("local %s has invalid type %v", v.Name, v.Type)
	}
	_, cross := f.plan.TempSlot[v]
	if !declaring && !cross {
		f.fail("local %s is used before its declaration in this task and is not a per-launch temporary", v.Name)
	}
	name := f.declare(cType(v.Type), fmt.Sprintf("v%d_%s", v.ID, kabi.Identifier(v.Name)))
	f.vars[v] = name
	if cross {
		f.tempIn = append(f.tempIn, v)
	}
	return name
}

// set assigns value to local v and keeps its temporary slot up to date.
func (f *fn) set(v *ir.Var, value string, declaring bool) {
	name := f.local(v, declaring)
	f.line("%s = %s;", name, value)
	if _, cross := f.plan.TempSlot[v]; !cross {
		return
	}
	if f.serial {
		f.tempOut[v] = true
		return
	}
	f.writeTemp(v)
}

func (f *fn) writeTemp(v *ir.Var) {
	val := f.vars[v]
	if v.Type == ir.Bool {
		val += " ? 1 : 0"
	}
	f.line("%s = %s;", f.tempAddr(v), val)
}

// compile writes the entry.
func (f *fn) compile() (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			if ce, ok := r.(compileError); ok {
				text, err = "", ce.err
				return
			}
			panic(r)
		}
	}()
	f.pos = f.task.Pos
	switch f.task.Kind {
	case lower.Serial:
		f.serialTask()
	case lower.Parallel:
		if f.task.Loop == nil {
			f.fail("parallel task %d has no loop", f.task.Index)
		}
		f.parallelTask(f.task.Loop)
	case lower.Block:
		if f.task.Blocks == nil {
			f.fail("block task %d has no loop", f.task.Index)
		}
		f.blockTask(f.task.Blocks)
	default:
		f.fail("task %d has unknown kind %v", f.task.Index, f.task.Kind)
	}
	return f.assemble(), nil
}

// assemble puts the entry together: its comment, its signature (exactly
// the layout's slots), the declarations, the loads of the temporaries it
// touches and the body.
func (f *fn) assemble() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "// task %d: %s", f.task.Index, f.task.Kind)
	if f.task.Pos.IsKnown() {
		fmt.Fprintf(&sb, " at %s", strings.ReplaceAll(f.task.Pos.String(), "\n", " "))
	}
	bound := f.info.BlockDim
	if bound == 0 {
		bound = kabi.MaxBlockDim // a block loop sized at launch
	}
	fmt.Fprintf(&sb, "\nQD_KERNEL void QD_BOUNDS(%d) %s(", bound, f.info.Entry)
	params := f.plan.Kernel.Params
	for i, s := range f.info.Slots {
		if i > 0 {
			sb.WriteString(", ")
		}
		switch s.Kind {
		case kabi.ScalarSlot:
			fmt.Fprintf(&sb, "%s %s", slotType(params[s.Param].Elem), slotName(s))
		case kabi.ArraySlot:
			fmt.Fprintf(&sb, "%s *%s", arrayType(params[s.Param]), slotName(s))
		case kabi.DimSlot:
			fmt.Fprintf(&sb, "qd_i64 %s", slotName(s))
		case kabi.TempsSlot:
			sb.WriteString("unsigned char *temps")
		}
	}
	sb.WriteString(")\n{\n")
	for _, ct := range slices.Sorted(maps.Keys(f.decls)) {
		fmt.Fprintf(&sb, "\t%s %s;\n", ct, strings.Join(f.decls[ct], ", "))
	}
	for _, v := range f.tempIn {
		load := f.tempAddr(v)
		if v.Type == ir.Bool {
			load = "(" + load + " != 0)"
		}
		fmt.Fprintf(&sb, "\t%s = %s;\n", f.vars[v], load)
	}
	sb.WriteString(f.body.String())
	sb.WriteString("}\n")
	return sb.String()
}

// serialTask runs the statements on one thread, then writes back the
// temporaries it set. Extra threads, should a launch have any, leave.
func (f *fn) serialTask() {
	f.line("if ((qd_tid() | qd_bid()) != 0)")
	f.line("\treturn;")
	f.stmts(f.task.Body)
	f.pos = f.task.Pos
	out := make([]*ir.Var, 0, len(f.tempOut))
	for v := range f.tempOut {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b *ir.Var) int { return f.plan.TempSlot[a] - f.plan.TempSlot[b] })
	for _, v := range out {
		f.writeTemp(v)
	}
}

// parallelTask writes the grid-stride loop of a parallel task over the
// row-major flattening of its 1 to 3 extents, as the PTX generator does:
// the extents are evaluated once and converted to int64 (an extent ≤ 0, or
// a uint64 one ≥ 2^63, runs nothing); each thread starts at
// block·blockDim + thread and steps by gridDim·blockDim; the index
// arithmetic is 32-bit when the total and the stride are both below 2^31
// (decided once per launch, one uniform flag), else 64-bit, in one loop so
// that the body is written once:
//
//	for (;;) {
//		if (fits) { if (i32 >= total) return; vars from i32 }
//		else      { if (i64 >= total) return; vars from i64 }
//		body
//		if (fits) i32 += stride; else i64 += stride;
//	}
func (f *fn) parallelTask(l *ir.ParallelFor) {
	f.pos = l.Pos
	n := len(l.Extents)
	ext := make([]string, n)
	for d, e := range l.Extents {
		if n > 3 || len(l.Vars) != n || e == nil || !e.Type().IsInteger() || l.Vars[d].Type != e.Type() {
			f.fail("parallel loop dimension %d: want 1 to 3 integer extents, each with a variable of its type", d)
		}
		ext[d] = f.index64(e)
	}
	if n == 0 {
		f.fail("parallel loop without extents")
	}
	empty := make([]string, n)
	for d := range ext {
		empty[d] = ext[d] + " <= 0"
	}
	f.line("if (%s)", strings.Join(empty, " || "))
	f.line("\treturn;")
	total := ext[0]
	for d := 1; d < n; d++ {
		total = f.tmp(ir.I64, "(qd_i64)((qd_u64)%s * (qd_u64)%s)", total, ext[d])
	}
	stride := f.tmp(ir.U64, "(qd_u64)qd_gdim() * qd_bdim()")
	i64 := f.tmp(ir.I64, "(qd_i64)((qd_u64)qd_bid() * qd_bdim() + qd_tid())")
	fits := f.tmp(ir.Bool, "%s < 0x80000000LL && %s < 0x80000000ULL", total, stride)
	i32 := f.tmp(ir.U32, "(qd_u32)%s", i64)
	ext32 := make([]string, n)
	for d := 1; d < n; d++ {
		ext32[d] = f.tmp(ir.U32, "(qd_u32)%s", ext[d])
	}
	vars := make([]string, n)
	for d, v := range l.Vars {
		vars[d] = f.local(v, true)
	}
	f.setupReductions()
	exit := "return;"
	if len(f.reduced) > 0 {
		exit = "goto done;" // every thread must reach the block's combination
	}
	f.line("for (;;) {")
	f.indent++
	f.line("if (%s) {", fits)
	f.indent++
	f.line("if (%s >= (qd_u32)%s)", i32, total)
	f.line("\t%s", exit)
	f.unflatten(l.Vars, vars, ir.U32, i32, ext32)
	f.indent--
	f.line("} else {")
	f.indent++
	f.line("if (%s >= %s)", i64, total)
	f.line("\t%s", exit)
	f.unflatten(l.Vars, vars, ir.U64, "(qd_u64)"+i64, ext)
	f.indent--
	f.line("}")
	f.stmts(l.Body)
	f.line("if (%s)", fits)
	f.line("\t%s += (qd_u32)%s;", i32, stride)
	f.line("else")
	f.line("\t%s += (qd_i64)%s;", i64, stride)
	f.indent--
	f.line("}")
	if len(f.reduced) > 0 {
		f.label("done")
		f.finishReductions()
	}
}

// unflatten splits the flat index idx (of unsigned type it, non-negative)
// into the loop variables, innermost dimension last.
func (f *fn) unflatten(vars []*ir.Var, names []string, it ir.Type, idx string, ext []string) {
	rest := idx
	for d := len(vars) - 1; d >= 0; d-- {
		val := rest
		if d > 0 {
			e := fmt.Sprintf("(%s)%s", cType(it), ext[d])
			val = f.tmp(it, "%s %% %s", rest, e)
			rest = f.tmp(it, "%s / %s", rest, e)
		}
		f.line("%s = (%s)%s;", names[d], cType(vars[d].Type), val)
	}
}
