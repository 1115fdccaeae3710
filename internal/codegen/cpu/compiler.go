package cpu

import (
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// value is a compiled expression; every value is an *ev[T] for the Go type
// T of the expression's IR type.
type value interface{ typ() ir.Type }

// ev is a compiled expression of Go type T. Exactly one of u and v is set:
// u computes a uniform value, v fills (or finds) a vector of f.n lanes.
// A varying integer value may also carry lin: lane k holds T(b+k)
// (wrapping like T) where b, ok := lin(f) and ok, which loads and stores
// use for contiguous access; ok is false when the lanes are not
// contiguous in this batch (a local that only some lanes assigned,
// linear.go), and the user then takes the vector.
//
// Optional fast paths ride along with v: into computes the value straight
// into a destination vector of f.n lanes (a contiguous store target or a
// variable) and reports false after a runtime error; rng gives the lanes
// where a bool is true as one run (see ranges.go).
type ev[T scalar] struct {
	u   func(*frame) T
	v   func(*frame) []T
	lin func(*frame) (int64, bool)
	// qa is the quasi-affine form of a varying i64 value (quasi.go).
	qa   *quasi
	into func(f *frame, d []T) bool
	rng  rangeFn
	// rngMasked: rng reads the mask (a nested && or ||, which evaluates
	// its right operand only where an active lane needs it).
	rngMasked bool
	// k is the value of a uniform value known when compiling (a constant,
	// or an operation on constants, folded), nil otherwise.
	k *T
}

// known is the uniform value v, known when compiling.
func known[T scalar](v T) *ev[T] { return &ev[T]{u: func(*frame) T { return v }, k: &v} }

func (*ev[T]) typ() ir.Type { return irType[T]() }

func (e *ev[T]) uniform() bool { return e.u != nil }

func uni[T scalar](u func(*frame) T) *ev[T] { return &ev[T]{u: u} }

func vary[T scalar](v func(*frame) []T) *ev[T] { return &ev[T]{v: v} }

// as recovers the typed form of a value; a mismatch is an ill-typed kernel.
func as[T scalar](c *compiler, x value) *ev[T] {
	e, ok := x.(*ev[T])
	if !ok {
		c.failf("operand has type %v, want %v", x.typ(), irType[T]())
	}
	return e
}

// vec returns a closure giving x as a vector, broadcasting a uniform value
// into a fresh register.
func vec[T scalar](c *compiler, x *ev[T]) func(*frame) []T {
	if x.v != nil {
		return x.v
	}
	u, r := x.u, c.tmp()
	return func(f *frame) []T {
		d := reg[T](f, r)
		fill(d, u(f))
		return d
	}
}

type mode uint8

const (
	// modeSerial: one lane (serial tasks, and launch-time extents).
	modeSerial mode = iota
	// modeRow: batches lie within one row, so the outer parallel indices
	// are uniform and the innermost one is contiguous.
	modeRow
	// modeFlat: batches span rows; every parallel index is a vector.
	modeFlat
)

// compileError aborts compilation of a task; compileBody turns it into the
// *ir.Error it carries.
type compileError struct{ err *ir.Error }

// compiler compiles one body of one task in one mode.
type compiler struct {
	plan  *lower.Plan
	task  *lower.Task
	kname string
	mode  mode

	vars     map[*ir.Var]int     // register of each per-lane local
	uvars    map[*ir.Var]int     // scalar slot of each uniform local (uniform.go)
	lins     map[*ir.Var]linSlot // scalar slots of each contiguous local (linear.go)
	linCand  map[*ir.Var]bool    // assigned locals that may stay contiguous (linear.go)
	uni      *uniformity         // the analysis that found them; nil outside a body
	shadow   map[*ir.Var]int     // registers standing in for locals in a converted if's branch (ifconv.go)
	pending  map[*ir.Var]int     // shadows that start standing in at their local's next assignment
	declared map[*ir.Var]bool
	index    map[*ir.Var]int // dimension of each parallel index variable
	assigned map[*ir.Var]bool
	eager    []func(*frame)

	cur, maxRegs int // register stack: permanent registers first, then temporaries
	nmasks       int
	nscal        int // scalar slots
	nred         int // reduction sites that hold their totals back
	flush        []func(*frame)
	body         []ir.Stmt          // the body compiled, for holdable
	holds        map[*ir.Param]bool // holdable's answers, per array
	scratch      int                // mask slot of lane-set restrictions (ranges.go), -1 until needed
	exitR        int                // per-lane loop exit codes, -1 if the body has no break/continue

	loops   []*ir.For
	loopIDs map[*ir.For]int32
	pos     ir.Pos // statement being compiled, for messages
	noAlias bool   // the statement has atomics: loads must copy

	// wide is how many Batch-lane registers each register spans: 1, or
	// more in a block task whose blocks may have more threads than a
	// batch has lanes (blocks.go).
	wide int
	// inThreads: a thread loop's body is being compiled (blocks.go).
	inThreads bool
}

func newCompiler(plan *lower.Plan, t *lower.Task, m mode) *compiler {
	return &compiler{
		plan: plan, task: t, kname: plan.Kernel.Name, mode: m,
		vars: map[*ir.Var]int{}, uvars: map[*ir.Var]int{}, lins: map[*ir.Var]linSlot{}, declared: map[*ir.Var]bool{},
		index: map[*ir.Var]int{}, assigned: map[*ir.Var]bool{},
		loopIDs: map[*ir.For]int32{}, exitR: -1, scratch: -1, pos: t.Pos, wide: 1,
	}
}

func (c *compiler) failf(format string, args ...any) {
	panic(compileError{ir.Errorf(c.pos, c.kname, format, args...)})
}

// rtError makes a runtime error positioned at the current statement.
func (c *compiler) rtError(format string, args ...any) *ir.Error {
	return ir.Errorf(c.pos, c.kname, format, args...)
}

func (c *compiler) tmp() int {
	r := c.cur
	c.cur += c.wide
	c.maxRegs = max(c.maxRegs, c.cur)
	return r
}

func (c *compiler) maskSlot() int {
	c.nmasks++
	return c.nmasks - 1
}

// scratchSlot is the one mask slot that lane-set restrictions share.
func (c *compiler) scratchSlot() int {
	if c.scratch < 0 {
		c.scratch = c.maskSlot()
	}
	return c.scratch
}

func (c *compiler) isTemp(v *ir.Var) (int, bool) {
	s, ok := c.plan.TempSlot[v]
	return s, ok
}

func (c *compiler) compileBody(body []ir.Stmt) (cd *code, err error) {
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(compileError)
			if !ok {
				panic(r)
			}
			cd, err = nil, ce.err
		}
	}()
	if c.task.Loop != nil && c.mode != modeSerial {
		for _, v := range c.task.Loop.Vars {
			c.index[v] = -1
		}
	}
	if c.task.Blocks != nil && c.mode != modeSerial {
		c.threadVars(-1) // index variables, set up after the prepass
	}
	c.body = body
	c.uni = analyzeUniform(c, body)
	for _, v := range c.uni.vars() {
		c.uvars[v] = c.nscal
		c.nscal++
	}
	c.prepass(body)
	if c.task.Loop != nil && c.mode != modeSerial {
		c.indexVars(c.task.Loop)
	}
	if c.task.Blocks != nil && c.mode != modeSerial {
		c.threadVars(0)
	}
	c.linearCandidates(body)
	fn, exits := c.block(body)
	if len(exits) > 0 {
		c.failf("break or continue outside a loop")
	}
	size := frameSize{regs: c.maxRegs, masks: c.nmasks, scal: c.nscal, red: c.nred}
	return &code{body: fn, size: size, exitR: c.exitR, eager: c.eager, flush: c.flush}, nil
}

// prepass gives every per-lane local its permanent register, numbers the
// loops, and notes parallel index variables that the body assigns to.
func (c *compiler) prepass(list []ir.Stmt) {
	for _, s := range list {
		c.pos = s.Position()
		switch s := s.(type) {
		case *ir.Decl:
			if _, ok := c.isTemp(s.Var); ok {
				continue
			}
			if c.declared[s.Var] {
				c.failf("variable %s declared twice", s.Var.Name)
			}
			c.declared[s.Var] = true
			if !s.Var.Type.Valid() {
				c.failf("variable %s has invalid type %v", s.Var.Name, s.Var.Type)
			}
			if _, uniform := c.uvars[s.Var]; !uniform {
				c.vars[s.Var] = c.tmp()
			}
		case *ir.Assign:
			if _, ok := c.index[s.Var]; ok {
				c.assigned[s.Var] = true
			}
		case *ir.If:
			c.prepass(s.Then)
			c.prepass(s.Else)
		case *ir.For:
			c.loopIDs[s] = int32(len(c.loopIDs) + 1)
			c.prepass(s.Init)
			c.prepass(s.Body)
			c.prepass(s.Post)
		case *ir.Break, *ir.Continue:
			if c.exitR < 0 {
				c.exitR = c.tmp()
			}
		case *ir.Threads:
			c.prepass(s.Body)
		case *ir.Blocks:
			c.failf("a block loop may appear only at the top level of a kernel or of a stream-parallel group")
		case *ir.ParallelFor:
			c.failf("a parallel loop may appear only at the top level of a kernel or of a stream-parallel group")
		case *ir.StreamParallel:
			c.failf("a stream-parallel group may appear only at the top level of a kernel")
		}
	}
}

// indexVars sets up the parallel index variables of the mode.
func (c *compiler) indexVars(loop *ir.ParallelFor) {
	c.pos = loop.Pos
	for d, v := range loop.Vars {
		if !v.Type.IsInteger() || v.Type != loop.Extents[d].Type() {
			c.failf("parallel index %s has type %v, its extent %v; both must be the same integer type", v.Name, v.Type, loop.Extents[d].Type())
		}
		c.index[v] = d
		if c.assigned[v] {
			r := c.tmp()
			c.vars[v] = r
			c.eager = append(c.eager, withIntType(v.Type, indexFiller{r: r, d: d}))
		}
	}
}

// indexFiller fills register r with parallel index d of every lane.
type indexFiller struct{ r, d int }

func withIntType(t ir.Type, x indexFiller) func(*frame) {
	switch t {
	case ir.I32:
		return func(f *frame) { fillIndex(reg[int32](f, x.r), f, x.d) }
	case ir.I64:
		return func(f *frame) { fillIndex(reg[int64](f, x.r), f, x.d) }
	case ir.U32:
		return func(f *frame) { fillIndex(reg[uint32](f, x.r), f, x.d) }
	default:
		return func(f *frame) { fillIndex(reg[uint64](f, x.r), f, x.d) }
	}
}

// fillIndex writes parallel index d of each lane, walking the multi-index
// from lane 0's.
func fillIndex[T integer](dst []T, f *frame, d int) {
	last := f.dims - 1
	if d == last {
		// Innermost: counts up and wraps at the end of a row.
		i, e := f.ix[d], f.ext[d]
		for k := range dst {
			dst[k] = T(i)
			if i++; i == e {
				i = 0
			}
		}
		return
	}
	ix := f.ix
	for k := range dst {
		dst[k] = T(ix[d])
		ix[last]++
		for j := last; j > 0 && ix[j] >= f.ext[j]; j-- {
			ix[j] = 0
			ix[j-1]++
		}
	}
}

// indexRef compiles a read of parallel index d.
func indexRef[T integer](c *compiler, d int) *ev[T] {
	last := 0 // a thread loop's index: the one dimension of a block
	if c.task.Loop != nil {
		last = len(c.task.Loop.Vars) - 1
	}
	if c.mode == modeRow && d < last {
		return uni(func(f *frame) T { return T(f.ix[d]) })
	}
	// The vector goes to a temporary register of the statement, so it is
	// refilled on every use (one cheap pass) rather than cached per batch.
	// Contiguous loads and stores use lin and never ask for it.
	r := c.tmp()
	if c.mode == modeRow {
		return &ev[T]{
			v: func(f *frame) []T {
				dst := reg[T](f, r)
				b := f.ix[d]
				for k := range dst {
					dst[k] = T(b + int64(k))
				}
				return dst
			},
			lin: func(f *frame) (int64, bool) { return f.ix[d], true },
		}
	}
	return vary(func(f *frame) []T {
		dst := reg[T](f, r)
		fillIndex(dst, f, d)
		return dst
	})
}

// extents compiles the extents of a parallel loop as launch-time closures.
func (c *compiler) extents(loop *ir.ParallelFor) (ext []func(*frame) int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(compileError)
			if !ok {
				panic(r)
			}
			ext, err = nil, ce.err
		}
	}()
	c.pos = loop.Pos
	for _, e := range loop.Extents {
		x := c.expr(e)
		var u func(*frame) int64
		switch x := x.(type) {
		case *ev[int32]:
			if x.u != nil {
				xu := x.u
				u = func(f *frame) int64 { return int64(xu(f)) }
			}
		case *ev[int64]:
			u = x.u
		case *ev[uint32]:
			if x.u != nil {
				xu := x.u
				u = func(f *frame) int64 { return int64(xu(f)) }
			}
		case *ev[uint64]:
			if x.u != nil {
				xu := x.u
				u = func(f *frame) int64 { return int64(min(xu(f), 1<<62)) }
			}
		default:
			c.failf("parallel loop extent has type %v, want an integer type", e.Type())
		}
		if u == nil {
			c.failf("parallel loop extent must not depend on per-iteration values")
		}
		ext = append(ext, u)
	}
	return ext, nil
}

func (c *compiler) varRef(v *ir.Var) value {
	if s, ok := c.isTemp(v); ok {
		return byType(v.Type, c, scalarWord{slot: s, temp: true})
	}
	if b := c.task.Blocks; b != nil && v == b.Var {
		return c.blockIndex()
	}
	if d, ok := c.index[v]; ok && d >= 0 && !c.assigned[v] {
		switch v.Type {
		case ir.I32:
			return indexRef[int32](c, d)
		case ir.I64:
			return indexRef[int64](c, d)
		case ir.U32:
			return indexRef[uint32](c, d)
		case ir.U64:
			return indexRef[uint64](c, d)
		}
	}
	if s, ok := c.uvars[v]; ok && c.declared[v] {
		return byType(v.Type, c, scalarWord{slot: s})
	}
	if _, ok := c.vars[v]; !ok {
		c.failf("variable %s is used but not declared in this task", v.Name)
	}
	if x := c.linearRef(v); x != nil {
		return x
	}
	return byType(v.Type, c, regRef{c.regOf(c.shadow, v)})
}

// typedBuilder builds a value of a type chosen at run time of the compiler;
// byType instantiates it for the Go type of an IR type.
type typedBuilder interface {
	boolV(c *compiler) value
	i32(c *compiler) value
	i64(c *compiler) value
	u32(c *compiler) value
	u64(c *compiler) value
	f32(c *compiler) value
	f64(c *compiler) value
	i8(c *compiler) value
	i16(c *compiler) value
	u8(c *compiler) value
	u16(c *compiler) value
}

func byType(t ir.Type, c *compiler, b typedBuilder) value {
	switch t {
	case ir.Bool:
		return b.boolV(c)
	case ir.I32:
		return b.i32(c)
	case ir.I64:
		return b.i64(c)
	case ir.U32:
		return b.u32(c)
	case ir.U64:
		return b.u64(c)
	case ir.F32:
		return b.f32(c)
	case ir.F64:
		return b.f64(c)
	case ir.I8:
		return b.i8(c)
	case ir.I16:
		return b.i16(c)
	case ir.U8:
		return b.u8(c)
	case ir.U16:
		return b.u16(c)
	}
	c.failf("invalid type %v", t)
	return nil
}

// scalarWord reads a uniform value of one word: a per-launch temporary (temp,
// kept as its ir.Const bit pattern) or a uniform local's scalar slot.
type scalarWord struct {
	slot int
	temp bool
}

func wordT[T scalar](w scalarWord) value {
	s := w.slot
	if w.temp {
		return uni(func(f *frame) T { return fromBits[T](f.a.Temps[s]) })
	}
	return uni(func(f *frame) T { return *scal[T](f, s) })
}
func (w scalarWord) boolV(*compiler) value { return wordT[bool](w) }
func (w scalarWord) i32(*compiler) value   { return wordT[int32](w) }
func (w scalarWord) i64(*compiler) value   { return wordT[int64](w) }
func (w scalarWord) u32(*compiler) value   { return wordT[uint32](w) }
func (w scalarWord) u64(*compiler) value   { return wordT[uint64](w) }
func (w scalarWord) f32(*compiler) value   { return wordT[float32](w) }
func (w scalarWord) f64(*compiler) value   { return wordT[float64](w) }
func (w scalarWord) i8(*compiler) value    { return wordT[int8](w) }
func (w scalarWord) i16(*compiler) value   { return wordT[int16](w) }
func (w scalarWord) u8(*compiler) value    { return wordT[uint8](w) }
func (w scalarWord) u16(*compiler) value   { return wordT[uint16](w) }

// regRef reads a per-lane local.
type regRef struct{ r int }

func regRefT[T scalar](r int) value {
	return vary(func(f *frame) []T { return reg[T](f, r) })
}
func (t regRef) boolV(*compiler) value { return regRefT[bool](t.r) }
func (t regRef) i32(*compiler) value   { return regRefT[int32](t.r) }
func (t regRef) i64(*compiler) value   { return regRefT[int64](t.r) }
func (t regRef) u32(*compiler) value   { return regRefT[uint32](t.r) }
func (t regRef) u64(*compiler) value   { return regRefT[uint64](t.r) }
func (t regRef) f32(*compiler) value   { return regRefT[float32](t.r) }
func (t regRef) f64(*compiler) value   { return regRefT[float64](t.r) }
func (t regRef) i8(*compiler) value    { return regRefT[int8](t.r) }
func (t regRef) i16(*compiler) value   { return regRefT[int16](t.r) }
func (t regRef) u8(*compiler) value    { return regRefT[uint8](t.r) }
func (t regRef) u16(*compiler) value   { return regRefT[uint16](t.r) }

// constant is an ir.Const.
type constant struct{ bits uint64 }

func constT[T scalar](b uint64) value    { return known(fromBits[T](b)) }
func (t constant) boolV(*compiler) value { return constT[bool](t.bits) }
func (t constant) i32(*compiler) value   { return constT[int32](t.bits) }
func (t constant) i64(*compiler) value   { return constT[int64](t.bits) }
func (t constant) u32(*compiler) value   { return constT[uint32](t.bits) }
func (t constant) u64(*compiler) value   { return constT[uint64](t.bits) }
func (t constant) f32(*compiler) value   { return constT[float32](t.bits) }
func (t constant) f64(*compiler) value   { return constT[float64](t.bits) }
func (t constant) i8(*compiler) value    { return constT[int8](t.bits) }
func (t constant) i16(*compiler) value   { return constT[int16](t.bits) }
func (t constant) u8(*compiler) value    { return constT[uint8](t.bits) }
func (t constant) u16(*compiler) value   { return constT[uint16](t.bits) }

// paramRef reads a scalar parameter.
type paramRef struct{ i int }

func paramT[T scalar](i int) value {
	return uni(func(f *frame) T { return fromBits[T](f.a.Scalars[i]) })
}
func (t paramRef) boolV(*compiler) value { return paramT[bool](t.i) }
func (t paramRef) i32(*compiler) value   { return paramT[int32](t.i) }
func (t paramRef) i64(*compiler) value   { return paramT[int64](t.i) }
func (t paramRef) u32(*compiler) value   { return paramT[uint32](t.i) }
func (t paramRef) u64(*compiler) value   { return paramT[uint64](t.i) }
func (t paramRef) f32(*compiler) value   { return paramT[float32](t.i) }
func (t paramRef) f64(*compiler) value   { return paramT[float64](t.i) }
func (t paramRef) i8(*compiler) value    { return paramT[int8](t.i) }
func (t paramRef) i16(*compiler) value   { return paramT[int16](t.i) }
func (t paramRef) u8(*compiler) value    { return paramT[uint8](t.i) }
func (t paramRef) u16(*compiler) value   { return paramT[uint16](t.i) }

func (c *compiler) arrayParam(p *ir.Param) {
	if p == nil || p.Index < 0 || p.Index >= len(c.plan.Kernel.Params) || c.plan.Kernel.Params[p.Index] != p {
		c.failf("unknown parameter")
	}
	if !p.IsArray() || p.Dims > ir.MaxDims {
		c.failf("%s is not an array of 1 to %d dimensions", p.Name, ir.MaxDims)
	}
}

func (c *compiler) lenOf(e *ir.Len) value {
	if e.Array != nil && e.Array.IsShared() {
		return c.sharedLen(e)
	}
	c.arrayParam(e.Array)
	if e.Dim < 0 || e.Dim >= e.Array.Dims {
		c.failf("len of dimension %d of %d-dimensional array %s", e.Dim, e.Array.Dims, e.Array.Name)
	}
	i, d := e.Array.Index, e.Dim
	return uni(func(f *frame) int64 { return int64(f.a.Arrays[i].Shape[d]) })
}
