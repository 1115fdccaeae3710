package ir

import "math"

// Builder writes a Kernel by hand: tests, benchmarks and tools use it where
// the Go-source front end is not wanted. Statements go to the innermost open
// block; the closures passed to If, ForRange, Parallel and Group open one.
//
//	b := ir.NewBuilder("saxpy")
//	a, x, y := b.Scalar("a", ir.F32), b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
//	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
//		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
//	})
//	k := b.Kernel()
type Builder struct {
	k      *Kernel
	block  *[]Stmt
	loops  []*For
	nvars  int
	pos    Pos
	blk    *Blocks // the block loop being built
	shared int     // shared arrays made so far
}

// NewBuilder starts a kernel named name.
func NewBuilder(name string) *Builder {
	b := &Builder{k: &Kernel{Name: name}}
	b.block = &b.k.Body
	return b
}

// Kernel returns the kernel built so far. Call Verify before using it.
func (b *Builder) Kernel() *Kernel { return b.k }

// At sets the position recorded on the statements and parameters added next.
func (b *Builder) At(p Pos) *Builder { b.pos = p; return b }

// Scalar adds a scalar parameter.
func (b *Builder) Scalar(name string, t Type) *Param { return b.param(name, t, 0) }

// Array adds an array parameter of dims dimensions.
func (b *Builder) Array(name string, elem Type, dims int) *Param { return b.param(name, elem, dims) }

func (b *Builder) param(name string, t Type, dims int) *Param {
	p := &Param{Name: name, Elem: t, Dims: dims, Index: len(b.k.Params), Pos: b.pos}
	b.k.Params = append(b.k.Params, p)
	return p
}

// Records adds an array parameter of dims dimensions whose elements are
// records of layout rec.
func (b *Builder) Records(name string, rec *Record, dims int) *Param {
	p := b.param(name, Invalid, dims)
	p.Rec = rec
	return p
}

// NewVar makes a fresh variable without declaring it.
func (b *Builder) NewVar(name string, t Type) *Var {
	b.nvars++
	return &Var{Name: name, Type: t, ID: b.nvars}
}

func (b *Builder) add(s Stmt) { *b.block = append(*b.block, s) }

func (b *Builder) in(body *[]Stmt, f func()) {
	saved := b.block
	b.block = body
	f()
	b.block = saved
}

// Decl declares a variable initialised to init, with init's type.
func (b *Builder) Decl(name string, init Expr) *Var {
	v := b.NewVar(name, init.Type())
	b.add(&Decl{Pos: b.pos, Var: v, Init: init})
	return v
}

// DeclZero declares a variable of type t set to its zero value.
func (b *Builder) DeclZero(name string, t Type) *Var {
	v := b.NewVar(name, t)
	b.add(&Decl{Pos: b.pos, Var: v})
	return v
}

// Assign sets v to e.
func (b *Builder) Assign(v *Var, e Expr) { b.add(&Assign{Pos: b.pos, Var: v, Value: e}) }

// Store writes value to a[index...].
func (b *Builder) Store(a *Param, value Expr, index ...Expr) {
	b.add(&Store{Pos: b.pos, Array: a, Index: index, Value: value})
}

// StoreLeaf writes value to leaf of the record a[index...].
func (b *Builder) StoreLeaf(a *Param, leaf int, value Expr, index ...Expr) {
	b.add(&Store{Pos: b.pos, Array: a, Index: index, Leaf: leaf, Value: value})
}

// Do evaluates e for its effect.
func (b *Builder) Do(e Expr) { b.add(&ExprStmt{Pos: b.pos, X: e}) }

// If adds an if statement; els may be nil.
func (b *Builder) If(cond Expr, then func(), els func()) {
	s := &If{Pos: b.pos, Cond: cond}
	b.add(s)
	b.in(&s.Then, then)
	if els != nil {
		b.in(&s.Else, els)
	}
}

// ForRange adds a serial loop for i := 0; i < n; i++ (i has n's type).
func (b *Builder) ForRange(name string, n Expr, body func(i *Var)) *For {
	i := b.NewVar(name, n.Type())
	s := &For{
		Pos:  b.pos,
		Init: []Stmt{&Decl{Pos: b.pos, Var: i, Init: Zero(n.Type())}},
		Cond: Op(Lt, Ref(i), n),
		Post: []Stmt{&Assign{Pos: b.pos, Var: i, Value: Op(Add, Ref(i), One(n.Type()))}},
	}
	b.add(s)
	b.loop(s, func() { body(i) })
	return s
}

// While adds a serial loop running body while cond holds; a nil cond loops
// until a Break.
func (b *Builder) While(cond Expr, body func()) *For {
	s := &For{Pos: b.pos, Cond: cond}
	b.add(s)
	b.loop(s, body)
	return s
}

func (b *Builder) loop(s *For, body func()) {
	b.loops = append(b.loops, s)
	b.in(&s.Body, body)
	b.loops = b.loops[:len(b.loops)-1]
}

// Break leaves the innermost loop.
func (b *Builder) Break() { b.add(&Break{Pos: b.pos}) }

// Continue goes to the next iteration of the innermost loop.
func (b *Builder) Continue() { b.add(&Continue{Pos: b.pos}) }

// Parallel adds a 1-dimensional parallel loop over [0, n).
func (b *Builder) Parallel(n Expr, body func(i *Var)) *ParallelFor {
	return b.ParallelN([]Expr{n}, func(v []*Var) { body(v[0]) })
}

// Parallel2 adds a 2-dimensional parallel loop over [0, n) × [0, m).
func (b *Builder) Parallel2(n, m Expr, body func(i, j *Var)) *ParallelFor {
	return b.ParallelN([]Expr{n, m}, func(v []*Var) { body(v[0], v[1]) })
}

// ParallelN adds a parallel loop over the given extents (1 to 3).
func (b *Builder) ParallelN(extents []Expr, body func(vars []*Var)) *ParallelFor {
	names := []string{"i", "j", "k"}
	s := &ParallelFor{Pos: b.pos, Extents: extents}
	for d, e := range extents {
		name := "d"
		if d < len(names) {
			name = names[d]
		}
		s.Vars = append(s.Vars, b.NewVar(name, e.Type()))
	}
	b.add(s)
	b.in(&s.Body, func() { body(s.Vars) })
	return s
}

// Group adds a stream-parallel group.
func (b *Builder) Group(body func()) *StreamParallel {
	s := &StreamParallel{Pos: b.pos}
	b.add(s)
	b.in(&s.Body, body)
	return s
}

// Expression helpers.

// Ref reads v.
func Ref(v *Var) Expr { return &VarRef{Var: v} }

// P reads the scalar parameter p.
func P(p *Param) Expr { return &ParamRef{Param: p} }

// LenOf is len of dimension dim of the array a (I64).
func LenOf(a *Param, dim int) Expr { return &Len{Array: a, Dim: dim} }

// Op applies a binary operator.
func Op(op BinOp, x, y Expr) Expr { return NewBinary(op, x, y) }

// Un applies a unary operator.
func Un(op UnOp, x Expr) Expr { return &Unary{Op: op, X: x} }

// Conv converts x to t.
func Conv(t Type, x Expr) Expr { return &Convert{To: t, X: x} }

// Sel is cond ? x : y.
func Sel(cond, x, y Expr) Expr { return &Select{Cond: cond, X: x, Y: y} }

// Fn calls a math intrinsic.
func Fn(f Intrinsic, args ...Expr) Expr { return &Call{Fn: f, Args: args} }

// Ld loads a[index...].
func Ld(a *Param, index ...Expr) Expr { return &Load{Array: a, Index: index} }

// LdLeaf loads leaf of the record a[index...].
func LdLeaf(a *Param, leaf int, index ...Expr) Expr { return &Load{Array: a, Index: index, Leaf: leaf} }

// AtomicLeaf applies an atomic operation to leaf of the record
// a[index...] and yields the old value.
func AtomicLeaf(op AtomicOp, a *Param, leaf int, value Expr, index ...Expr) Expr {
	return &Atomic{Op: op, Array: a, Index: index, Leaf: leaf, Value: value}
}

// Bits reinterprets the bits of x as type to, of the same size.
func Bits(to Type, x Expr) Expr { return &Bitcast{X: x, To: to} }

// AtomicE applies an atomic operation to a[index...] and yields the old value.
func AtomicE(op AtomicOp, a *Param, value Expr, index ...Expr) Expr {
	return &Atomic{Op: op, Array: a, Index: index, Value: value}
}

// Constants.

// I32c is an i32 constant.
func I32c(v int32) Expr { return &Const{T: I32, Bits: uint64(int64(v))} }

// I64c is an i64 constant.
func I64c(v int64) Expr { return &Const{T: I64, Bits: uint64(v)} }

// U32c is a u32 constant.
func U32c(v uint32) Expr { return &Const{T: U32, Bits: uint64(v)} }

// U64c is a u64 constant.
func U64c(v uint64) Expr { return &Const{T: U64, Bits: v} }

// F32c is an f32 constant.
func F32c(v float32) Expr { return &Const{T: F32, Bits: uint64(math.Float32bits(v))} }

// F64c is an f64 constant.
func F64c(v float64) Expr { return &Const{T: F64, Bits: math.Float64bits(v)} }

// BoolC is a bool constant.
func BoolC(v bool) Expr {
	if v {
		return &Const{T: Bool, Bits: 1}
	}
	return &Const{T: Bool}
}

// IntC is v converted to the integer type t as Go converts it (truncated to
// t's width, then sign- or zero-extended as Const's Bits require).
func IntC(t Type, v int64) Expr {
	bits := uint64(v)
	switch t {
	case I32:
		bits = uint64(int64(int32(v)))
	case U32:
		bits = uint64(uint32(v))
	case I8:
		bits = uint64(int64(int8(v)))
	case I16:
		bits = uint64(int64(int16(v)))
	case U8:
		bits = uint64(uint8(v))
	case U16:
		bits = uint64(uint16(v))
	}
	return &Const{T: t, Bits: bits}
}

// Zero is the zero value of t.
func Zero(t Type) Expr { return &Const{T: t} }

// One is the value 1 of the numeric type t.
func One(t Type) Expr {
	switch t {
	case F32:
		return F32c(1)
	case F64:
		return F64c(1)
	case Bool:
		return BoolC(true)
	}
	return &Const{T: t, Bits: 1}
}

// Blocks adds a block loop of count blocks of size threads (both I64).
// Inside body, Shared, PerThread, Threads and the block collectives add to
// it.
func (b *Builder) Blocks(count, size Expr, body func(blk *Var)) *Blocks {
	s := &Blocks{Pos: b.pos, Var: b.NewVar("b", I64), Count: count, Size: size}
	b.add(s)
	saved := b.blk
	b.blk = s
	b.in(&s.Body, func() { body(s.Var) })
	b.blk = saved
	return s
}

// Shared adds a shared array of the block loop being built, of elem
// elements and the given constant extents.
func (b *Builder) Shared(name string, elem Type, extents ...int) *Param {
	b.shared++
	p := &Param{Name: name, Elem: elem, Dims: len(extents), Index: -b.shared, Pos: b.pos, Shared: extents}
	if b.blk != nil {
		b.blk.Shared = append(b.blk.Shared, p)
	}
	return p
}

// PerThread declares a per-thread local of type t, zero in every thread.
func (b *Builder) PerThread(name string, t Type) *Var {
	v := b.DeclZero(name, t)
	if b.blk != nil {
		b.blk.PerThread = append(b.blk.PerThread, v)
	}
	return v
}

// Threads adds a thread loop of the block loop being built.
func (b *Builder) Threads(body func(t *Var)) *Threads {
	s := &Threads{Pos: b.pos, Var: b.NewVar("t", I64)}
	b.add(s)
	b.in(&s.Body, func() { body(s.Var) })
	return s
}

// BlockReduce declares a uniform local set to the reduction (Add, Min or
// Max) of the per-thread local x over the block.
func (b *Builder) BlockReduce(op BinOp, x *Var) *Var {
	r := b.DeclZero("red", x.Type)
	b.add(&BlockReduce{Pos: b.pos, Op: op, X: x, Result: r})
	return r
}

// BlockScan declares a per-thread local set to the exclusive (or
// inclusive) prefix sum of the per-thread local x over the block.
func (b *Builder) BlockScan(inclusive bool, x *Var) *Var {
	r := b.PerThread("scan", x.Type)
	b.add(&BlockScan{Pos: b.pos, Inclusive: inclusive, X: x, Result: r})
	return r
}
