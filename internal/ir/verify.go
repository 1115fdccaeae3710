package ir

import (
	"errors"
	"go/token"
	"math"
	"strconv"
)

// maxVerifyErrors bounds the errors Verify reports, so that one broken
// construct repeated throughout a kernel does not bury the message.
const maxVerifyErrors = 10

// MaxBlockDim is the largest ParallelFor.BlockDim: GPUs run at most 1024
// threads per block.
const MaxBlockDim = 1024

// Verify checks that k is well formed and well typed. It returns nil, one
// *Error, or an errors.Join of every *Error found (at most 10), in source
// order; errors.As gets the first. Each error carries the position of the
// statement (or parameter) at fault and the kernel's name.
//
// It checks the kernel's name and parameters; that every expression is typed
// as expr.go documents; that every local is declared once, before its uses,
// in a block enclosing them (a Decl is visible to the later statements of its
// block and their nested blocks, a For's Init declarations to its Cond, Post
// and Body, a ParallelFor's Vars to its Body only); that parallel loop
// variables are never assigned; that Break and Continue sit inside a For of
// the same parallel loop body or task; and the shape of every ParallelFor.
// Where ParallelFor and StreamParallel may appear is lowering's business:
// Verify accepts them anywhere and checks their contents.
//
// Verify never panics, whatever nil fields or foreign nodes k holds.
func Verify(k *Kernel) error {
	if k == nil {
		return &Error{Msg: "nil kernel"}
	}
	v := &verifier{
		k:       k,
		params:  map[*Param]bool{},
		decl:    map[*Var]Pos{},
		allDecl: map[*Var]Pos{},
		ids:     map[int]*Var{},
		pvars:   map[*Var]bool{},
		visible: map[*Var]bool{},
	}
	v.run()
	switch len(v.errs) {
	case 0:
		return nil
	case 1:
		return v.errs[0]
	}
	return errors.Join(v.errs...)
}

type verifier struct {
	k    *Kernel
	errs []error

	params  map[*Param]bool
	decl    map[*Var]Pos // locals declared so far in the walk
	allDecl map[*Var]Pos // every declared local of the kernel, for messages
	ids     map[int]*Var
	pvars   map[*Var]bool // ParallelFor variables

	// visible holds the locals in scope at this point of the walk;
	// inScope lists them, innermost block's last, and marks holds
	// len(inScope) at the start of each open block, so that leaving a
	// block forgets its locals. A use is one map lookup whatever the
	// nesting: walking a chain of scopes made a switch's if/else chain
	// of n cases (n nested blocks) cost O(n²).
	visible map[*Var]bool
	inScope []*Var
	marks   []int

	// loops is the stack of enclosing For statements; loops[base:] are those
	// of the current parallel loop body or task, which Break and Continue
	// may target.
	loops []*For
	base  int
	// inParallel is set within a ParallelFor body and not reset by an inner
	// For, for the message of a Break that tries to leave a parallel loop.
	inParallel bool
	pos        Pos // the statement being checked, for expression errors
	blk        blockState
}

func (v *verifier) errorf(pos Pos, format string, args ...any) {
	if len(v.errs) == maxVerifyErrors {
		v.errs = append(v.errs, Errorf(pos, v.k.Name, "too many errors; stopping"))
	}
	if len(v.errs) > maxVerifyErrors {
		return
	}
	v.errs = append(v.errs, Errorf(pos, v.k.Name, format, args...))
}

func (v *verifier) run() {
	k := v.k
	switch {
	case k.Name == "":
		v.errorf(k.Pos, "kernel has no name")
	case k.Name == "_" || !token.IsIdentifier(k.Name):
		v.errorf(k.Pos, "kernel name %q is not a valid identifier; use a Go identifier other than _", k.Name)
	}
	names := map[string]*Param{}
	for i, p := range k.Params {
		if p == nil {
			v.errorf(k.Pos, "parameter %d is nil", i)
			continue
		}
		v.params[p] = true
		switch {
		case p.Name == "":
			v.errorf(p.Pos, "parameter %d has no name", i)
		case !token.IsIdentifier(p.Name):
			v.errorf(p.Pos, "parameter name %q is not a valid identifier", p.Name)
		case p.Name != "_" && names[p.Name] != nil:
			v.errorf(p.Pos, "parameter %q is declared twice (first at %s); rename one", p.Name, posText(names[p.Name].Pos))
		default:
			names[p.Name] = p
		}
		if p.Index != i {
			v.errorf(p.Pos, "parameter %q has Index %d but is parameter %d; Index must be its position in Params", p.Name, p.Index, i)
		}
		switch {
		case p.Rec != nil:
			v.record(p)
		case !p.Elem.Valid():
			v.errorf(p.Pos, "parameter %q has invalid type %s", p.Name, p.Elem)
		}
		if p.Dims < 0 || p.Dims > MaxDims {
			v.errorf(p.Pos, "parameter %q has %d dimensions; arrays have 1 to %d (0 for a scalar)", p.Name, p.Dims, MaxDims)
		}
	}
	Inspect(k.Body, func(n Node) bool {
		switch n := n.(type) {
		case *Decl:
			if _, ok := v.allDecl[n.Var]; !ok {
				v.allDecl[n.Var] = n.Pos
			}
		case *ParallelFor:
			for _, pv := range n.Vars {
				if _, ok := v.allDecl[pv]; !ok {
					v.allDecl[pv] = n.Pos
				}
			}
		case *Blocks:
			if _, ok := v.allDecl[n.Var]; n.Var != nil && !ok {
				v.allDecl[n.Var] = n.Pos
			}
		case *Threads:
			if _, ok := v.allDecl[n.Var]; n.Var != nil && !ok {
				v.allDecl[n.Var] = n.Pos
			}
		}
		return true
	})
	v.block(k.Body)
}

// push opens a block; pop closes it, forgetting the locals it declared.
func (v *verifier) push() { v.marks = append(v.marks, len(v.inScope)) }

func (v *verifier) pop() {
	m := v.marks[len(v.marks)-1]
	v.marks = v.marks[:len(v.marks)-1]
	for _, x := range v.inScope[m:] {
		delete(v.visible, x)
	}
	v.inScope = v.inScope[:m]
}

func (v *verifier) block(list []Stmt) {
	v.push()
	v.stmts(list)
	v.pop()
}

func (v *verifier) stmts(list []Stmt) {
	for _, s := range list {
		v.stmt(s)
	}
}

// declare makes x visible in the current scope, checking that it is a new,
// well-typed local with a unique ID.
func (v *verifier) declare(x *Var, pos Pos) {
	if x == nil {
		v.errorf(pos, "declaration of a nil variable")
		return
	}
	if first, ok := v.decl[x]; ok {
		v.errorf(pos, "variable %s is declared twice (first at %s); use a new Var for each declaration", varName(x), posText(first))
		return
	}
	if !x.Type.Valid() {
		v.errorf(pos, "variable %s has invalid type %s", varName(x), x.Type)
	}
	if other := v.ids[x.ID]; other != nil {
		v.errorf(pos, "variables %s and %s share ID %d; IDs must be unique within a kernel", varName(other), varName(x), x.ID)
	} else {
		v.ids[x.ID] = x
	}
	v.decl[x] = pos
	v.visible[x] = true
	v.inScope = append(v.inScope, x)
}

// use checks that x is visible here and returns its type (Invalid when not).
func (v *verifier) use(x *Var) Type {
	if x == nil {
		v.errorf(v.pos, "reference to a nil variable")
		return Invalid
	}
	if v.visible[x] {
		return x.Type
	}
	if _, ok := v.decl[x]; ok {
		v.errorf(v.pos, "variable %s is used outside the block that declares it (at %s); declare it in a block enclosing this use", varName(x), posText(v.decl[x]))
	} else if p, ok := v.allDecl[x]; ok {
		v.errorf(v.pos, "variable %s is used before its declaration at %s", varName(x), posText(p))
	} else {
		v.errorf(v.pos, "variable %s is never declared", varName(x))
	}
	return Invalid
}

func (v *verifier) stmt(s Stmt) {
	if s == nil {
		v.errorf(v.pos, "nil statement")
		return
	}
	v.pos = s.Position()
	switch s := s.(type) {
	case *Decl:
		if s.Init != nil {
			t := v.expr(s.Init)
			if s.Var != nil && t != Invalid && s.Var.Type.Valid() && t != s.Var.Type {
				v.errorf(s.Pos, "variable %s of type %s is initialised with a %s value; convert the value", varName(s.Var), s.Var.Type, t)
			}
		}
		v.declare(s.Var, s.Pos)
	case *Assign:
		vt := v.use(s.Var)
		if s.Var != nil && v.pvars[s.Var] {
			v.errorf(s.Pos, "cannot assign to parallel loop variable %s; copy it to a local and change that", varName(s.Var))
		}
		t := v.operand(s.Value, "assigned value")
		if vt != Invalid && t != Invalid && t != vt {
			v.errorf(s.Pos, "cannot assign a %s value to variable %s of type %s; convert the value", t, varName(s.Var), vt)
		}
	case *Store:
		elem := v.access(s.Array, s.Index, s.Leaf, "store to")
		t := v.operand(s.Value, "stored value")
		if elem != Invalid && t != Invalid && t != elem {
			v.errorf(s.Pos, "cannot store a %s value into %s, whose elements are %s; convert the value", t, paramName(s.Array), elem)
		}
	case *ExprStmt:
		v.operand(s.X, "expression statement")
	case *If:
		if t := v.operand(s.Cond, "if condition"); t != Invalid && t != Bool {
			v.errorf(s.Pos, "if condition has type %s, want bool; compare it (x != 0)", t)
		}
		v.block(s.Then)
		v.block(s.Else)
	case *For:
		v.forStmt(s)
	case *Break:
		v.branch(s.Pos, s.Loop, "break")
	case *Continue:
		v.branch(s.Pos, s.Loop, "continue")
	case *ParallelFor:
		v.parallelFor(s)
	case *StreamParallel:
		saved := v.base
		v.base = len(v.loops)
		v.block(s.Body)
		v.base = saved
	case *Blocks:
		v.blocks(s)
	case *Threads:
		v.threads(s)
	case *BlockReduce:
		if v.collective(s.Pos, "block reduction", s.X, s.Result) != Invalid && s.Op != Add && s.Op != Min && s.Op != Max {
			v.errorf(s.Pos, "block reduction with operator %d; it sums, or takes the minimum or maximum", s.Op)
		}
	case *BlockScan:
		v.collective(s.Pos, "block scan", s.X, s.Result)
	default:
		v.errorf(v.pos, "unknown statement %T", s)
	}
}

func (v *verifier) forStmt(s *For) {
	v.push()
	for _, st := range s.Init {
		switch st.(type) {
		case *Decl, *Assign, *Store, *ExprStmt:
			v.stmt(st)
		default:
			v.errorf(s.Pos, "a for loop's Init may hold only declarations, assignments, stores and expression statements, not a %T; move it before the loop", st)
		}
	}
	v.pos = s.Pos
	if s.Cond != nil {
		if t := v.expr(s.Cond); t != Invalid && t != Bool {
			v.errorf(s.Pos, "for condition has type %s, want bool", t)
		}
	}
	for _, st := range s.Post {
		switch st.(type) {
		case *Assign, *Store, *ExprStmt:
			v.stmt(st)
		default:
			v.errorf(s.Pos, "a for loop's Post may hold only assignments, stores and expression statements, not a %T; move it into the loop body", st)
		}
	}
	v.loops = append(v.loops, s)
	v.block(s.Body)
	v.loops = v.loops[:len(v.loops)-1]
	v.pop()
}

func (v *verifier) branch(pos Pos, target *For, what string) {
	own := v.loops[v.base:]
	if target == nil {
		if len(own) > 0 {
			return
		}
		switch {
		case v.inParallel && what == "break":
			v.errorf(pos, "break cannot leave a parallel loop: its iterations run concurrently and in no order; put the rest of the body under an if, or use a serial for loop inside it")
		case v.inParallel:
			v.errorf(pos, "continue directly in a parallel loop's body is not supported; put the rest of the body under an if instead")
		default:
			v.errorf(pos, "%s outside a for loop", what)
		}
		return
	}
	for _, l := range own {
		if l == target {
			return
		}
	}
	for _, l := range v.loops[:v.base] {
		if l == target {
			v.errorf(pos, "%s cannot leave a parallel loop or stream-parallel block for the enclosing for loop at %s; each iteration of a parallel loop runs on its own", what, posText(target.Pos))
			return
		}
	}
	v.errorf(pos, "%s targets the for loop at %s, which does not enclose it", what, posText(target.Pos))
}

func (v *verifier) parallelFor(s *ParallelFor) {
	n := len(s.Vars)
	if n < 1 || n > 3 {
		v.errorf(s.Pos, "parallel loop has %d variables; it needs 1 to 3", n)
	}
	if len(s.Extents) != n {
		v.errorf(s.Pos, "parallel loop has %d variables but %d extents; give one extent per variable", n, len(s.Extents))
	}
	for d, e := range s.Extents {
		t := v.operand(e, "parallel loop extent")
		switch {
		case t != Invalid && !t.IsInteger():
			v.errorf(s.Pos, "parallel loop extent %d has type %s; extents must be integers", d, t)
		case t.IsSmall():
			// Loop variables are indices of 32 or 64 bits in every
			// generator; a small one would be computed with in 32 bits
			// anyway.
			v.errorf(s.Pos, "parallel loop extent %d has type %s; extents are 32- or 64-bit integers: convert it to int", d, t)
		}
		InspectExpr(e, func(n Node) bool {
			if _, ok := n.(*Atomic); ok {
				v.errorf(s.Pos, "parallel loop extent %d holds an atomic operation; compute it in a variable before the loop", d)
				return false
			}
			return true
		})
		if d < n && s.Vars[d] != nil && t != Invalid && s.Vars[d].Type != t {
			v.errorf(s.Pos, "parallel loop variable %s has type %s but its extent has type %s; they must match", varName(s.Vars[d]), s.Vars[d].Type, t)
		}
	}
	switch {
	case s.BlockDim < 0:
		v.errorf(s.Pos, "parallel loop block dim %d is negative; use 1 to %d, or 0 for the backend's default", s.BlockDim, MaxBlockDim)
	case s.BlockDim > MaxBlockDim:
		v.errorf(s.Pos, "parallel loop block dim %d is too large: GPUs run at most %d threads per block; use 1 to %d (a multiple of 32 fills whole warps), or 0 for the backend's default", s.BlockDim, MaxBlockDim, MaxBlockDim)
	}
	v.push()
	for _, x := range s.Vars {
		v.declare(x, s.Pos)
		if x != nil {
			v.pvars[x] = true
		}
	}
	savedBase, savedPar := v.base, v.inParallel
	v.base, v.inParallel = len(v.loops), true
	v.block(s.Body)
	v.base, v.inParallel = savedBase, savedPar
	v.pop()
}

// operand checks a required expression; what names it for the message when
// it is missing.
func (v *verifier) operand(e Expr, what string) Type {
	if e == nil {
		v.errorf(v.pos, "missing %s", what)
		return Invalid
	}
	return v.expr(e)
}

// param checks that p is a parameter of this kernel.
func (v *verifier) param(p *Param) bool {
	if p == nil {
		v.errorf(v.pos, "reference to a nil parameter")
		return false
	}
	if !v.params[p] {
		if p.IsShared() {
			v.errorf(v.pos, "shared array %q is used outside the block loop that declares it", p.Name)
			return false
		}
		v.errorf(v.pos, "parameter %q is not a parameter of this kernel", p.Name)
		return false
	}
	return p.Rec != nil || p.Elem.Valid()
}

// access checks an array access (Load, Store or Atomic) and returns the
// element type, or Invalid.
func (v *verifier) access(a *Param, index []Expr, leaf int, what string) Type {
	ok := v.param(a)
	if a == nil {
		return Invalid
	}
	if ok && !a.IsArray() {
		v.errorf(v.pos, "%s %q, which is a scalar parameter, not an array", what, a.Name)
		ok = false
	}
	if ok && len(index) != a.Dims {
		v.errorf(v.pos, "%s %q with %d indices; it has %d dimensions", what, a.Name, len(index), a.Dims)
		ok = false
	}
	for i, x := range index {
		if t := v.operand(x, "index"); t != Invalid && !t.IsInteger() {
			v.errorf(v.pos, "index %d of %q has type %s; indices must be integers", i, a.Name, t)
		}
	}
	if !ok {
		return Invalid
	}
	t := a.LeafType(leaf)
	if t == Invalid {
		v.errorf(v.pos, "%s %q at leaf %d; its elements have %d", what, a.Name, leaf, max(len(a.recLeaves()), 1))
	}
	return t
}

// record checks the layout of p, an array of records: every leaf a valid
// type at an aligned offset inside the element, and no two overlapping.
func (v *verifier) record(p *Param) {
	r := p.Rec
	if p.Elem != Invalid {
		v.errorf(p.Pos, "parameter %q has a record layout and element type %s; a record array has no element type", p.Name, p.Elem)
	}
	if p.Dims == 0 {
		v.errorf(p.Pos, "scalar parameter %q has a record layout; only arrays hold records", p.Name)
	}
	if len(r.Leaves) == 0 || r.Size <= 0 || r.Align <= 0 || r.Size%r.Align != 0 {
		v.errorf(p.Pos, "parameter %q: record %s has %d leaves, size %d and alignment %d", p.Name, r.Name, len(r.Leaves), r.Size, r.Align)
		return
	}
	end := 0
	for _, l := range r.Leaves {
		sz := l.Type.Size()
		switch {
		case !l.Type.Valid():
			v.errorf(p.Pos, "parameter %q: leaf %s of %s has invalid type %s", p.Name, l.Path, r.Name, l.Type)
		case l.Offset < end || l.Offset%sz != 0 || l.Offset+sz > r.Size:
			v.errorf(p.Pos, "parameter %q: leaf %s of %s at offset %d (%d bytes) overlaps, is misaligned or lies outside the %d-byte element", p.Name, l.Path, r.Name, l.Offset, sz, r.Size)
		}
		end = l.Offset + sz
	}
}

// recLeaves is p's record's leaves, or nil.
func (p *Param) recLeaves() []Leaf {
	if p.Rec == nil {
		return nil
	}
	return p.Rec.Leaves
}

// expr checks e and returns its type, or Invalid when e is ill-typed; Invalid
// operands are not reported again so that one mistake gives one message.
func (v *verifier) expr(e Expr) Type {
	switch e := e.(type) {
	case nil:
		v.errorf(v.pos, "missing operand")
		return Invalid
	case *Const:
		return v.constant(e)
	case *ParamRef:
		if !v.param(e.Param) {
			return Invalid
		}
		if e.Param.IsArray() {
			v.errorf(v.pos, "array parameter %q used as a scalar; index it or take its length", e.Param.Name)
			return Invalid
		}
		return e.Param.Elem
	case *VarRef:
		return v.use(e.Var)
	case *Len:
		if !v.param(e.Array) {
			return I64
		}
		if e.Dim < 0 || e.Dim >= e.Array.Dims {
			v.errorf(v.pos, "len of dimension %d of %q, which has %d dimensions", e.Dim, e.Array.Name, e.Array.Dims)
		}
		return I64
	case *Unary:
		return v.unary(e)
	case *Binary:
		return v.binary(e)
	case *Convert:
		t := v.operand(e.X, "conversion operand")
		switch {
		case e.To == Bool:
			v.errorf(v.pos, "conversion to bool is not allowed; compare with zero instead (x != 0)")
			return Invalid
		case !e.To.Valid():
			v.errorf(v.pos, "conversion to invalid type %s", e.To)
			return Invalid
		case t == Bool:
			v.errorf(v.pos, "conversion from bool to %s is not allowed; use a select (c ? 1 : 0)", e.To)
		}
		return e.To
	case *Select:
		c := v.operand(e.Cond, "select condition")
		x := v.operand(e.X, "select operand")
		y := v.operand(e.Y, "select operand")
		if c != Invalid && c != Bool {
			v.errorf(v.pos, "select condition has type %s, want bool", c)
		}
		if x == Invalid || y == Invalid {
			return Invalid
		}
		if x != y {
			v.errorf(v.pos, "select arms have types %s and %s; they must have one type", x, y)
			return Invalid
		}
		return x
	case *Call:
		return v.call(e)
	case *Load:
		return v.access(e.Array, e.Index, e.Leaf, "load from")
	case *Bitcast:
		t := v.operand(e.X, "bit cast operand")
		if t == Invalid {
			return Invalid
		}
		if !e.To.IsNumeric() || !t.IsNumeric() || e.To.Size() != t.Size() || e.To.IsSmall() {
			v.errorf(v.pos, "bit cast of %s to %s: both must be numeric types of 4 or 8 bytes", t, e.To)
			return Invalid
		}
		return e.To
	case *Atomic:
		return v.atomic(e)
	}
	v.errorf(v.pos, "unknown expression %T", e)
	return Invalid
}

func (v *verifier) constant(c *Const) Type {
	ok := true
	switch c.T {
	case Bool:
		ok = c.Bits <= 1
	case I32:
		ok = c.Bits == uint64(int64(int32(c.Bits)))
	case U32, F32:
		ok = c.Bits <= math.MaxUint32
	case I8:
		ok = c.Bits == uint64(int64(int8(c.Bits)))
	case I16:
		ok = c.Bits == uint64(int64(int16(c.Bits)))
	case U8:
		ok = c.Bits <= math.MaxUint8
	case U16:
		ok = c.Bits <= math.MaxUint16
	case I64, U64, F64:
	default:
		v.errorf(v.pos, "constant of invalid type %s", c.T)
		return Invalid
	}
	if !ok {
		v.errorf(v.pos, "%s constant has non-canonical bits %#x (bools are 0 or 1, signed integers sign-extended, u32, u16, u8 and f32 zero-extended)", c.T, c.Bits)
	}
	return c.T
}

func (v *verifier) unary(e *Unary) Type {
	t := v.operand(e.X, "operand of "+e.Op.String())
	if t == Invalid {
		return Invalid
	}
	if t.IsSmall() {
		v.errorf(v.pos, "%s on %s: 8- and 16-bit values are computed with in 32 bits; convert the operand", e.Op, t)
		return Invalid
	}
	var ok bool
	switch e.Op {
	case Neg:
		ok = t.IsNumeric()
	case Not:
		ok = t == Bool
	case BitNot:
		ok = t.IsInteger()
	default:
		v.errorf(v.pos, "unknown unary operator %d", e.Op)
		return Invalid
	}
	if !ok {
		v.errorf(v.pos, "operator %s is not defined on %s", e.Op, t)
		return Invalid
	}
	return t
}

func (v *verifier) binary(e *Binary) Type {
	x := v.operand(e.X, "left operand of "+e.Op.String())
	y := v.operand(e.Y, "right operand of "+e.Op.String())
	result := Invalid
	if e.Op.IsComparison() || e.Op.IsLogical() {
		result = Bool
	}
	if x == Invalid || y == Invalid {
		return result
	}
	if x.IsSmall() || y.IsSmall() {
		v.errorf(v.pos, "%s on %s and %s: 8- and 16-bit values are computed with in 32 bits; convert the operands", e.Op, x, y)
		return result
	}
	var ok bool
	switch e.Op {
	case Add, Sub, Mul, Div, Min, Max, Lt, Le, Gt, Ge:
		ok = x.IsNumeric()
	case Rem, And, Or, Xor, AndNot:
		ok = x.IsInteger()
	case Eq, Ne:
		ok = true
	case LAnd, LOr:
		ok = x == Bool
	case Shl, Shr:
		if !x.IsInteger() || !y.IsInteger() {
			v.errorf(v.pos, "shift %s needs integer operands, got %s and %s", e.Op, x, y)
			return Invalid
		}
		return x
	default:
		v.errorf(v.pos, "unknown binary operator %d", e.Op)
		return Invalid
	}
	if !ok {
		v.errorf(v.pos, "operator %s is not defined on %s", e.Op, x)
		return Invalid
	}
	if x != y {
		v.errorf(v.pos, "operator %s has operands of types %s and %s; they must have one type: convert one", e.Op, x, y)
		return Invalid
	}
	if result == Invalid {
		result = x
	}
	return result
}

func (v *verifier) call(e *Call) Type {
	n := e.Fn.Arity()
	if n == 0 {
		v.errorf(v.pos, "call of unknown intrinsic %d", e.Fn)
		return Invalid
	}
	if len(e.Args) != n {
		v.errorf(v.pos, "%s takes %d arguments, got %d", e.Fn, n, len(e.Args))
		return Invalid
	}
	result := Invalid
	for i, a := range e.Args {
		t := v.operand(a, "argument of "+e.Fn.String())
		switch {
		case t == Invalid:
			return Invalid
		case !t.IsFloat():
			v.errorf(v.pos, "%s needs float arguments, got %s; convert it to f32 or f64", e.Fn, t)
			return Invalid
		case i > 0 && t != result:
			v.errorf(v.pos, "%s has arguments of types %s and %s; they must have one type", e.Fn, result, t)
			return Invalid
		}
		result = t
	}
	return result
}

func (v *verifier) atomic(e *Atomic) Type {
	elem := v.access(e.Array, e.Index, e.Leaf, "atomic "+e.Op.String()+" on")
	val := v.operand(e.Value, "atomic value")
	var cmp Type
	if e.Compare != nil {
		cmp = v.expr(e.Compare)
	}
	if e.Op < AtomicAdd || e.Op > AtomicCAS {
		v.errorf(v.pos, "unknown atomic operation %d", e.Op)
		return Invalid
	}
	if elem == Invalid {
		return Invalid
	}
	switch {
	case elem == Bool:
		v.errorf(v.pos, "atomic %s on %q: atomics on bool arrays are not supported; use an i32 or u32 array", e.Op, e.Array.Name)
		return Invalid
	case elem.IsSmall():
		v.errorf(v.pos, "atomic %s on %q: atomics on %s elements are not supported; use 32- or 64-bit elements", e.Op, e.Array.Name, elem)
		return Invalid
	case (e.Op == AtomicAnd || e.Op == AtomicOr || e.Op == AtomicXor) && !elem.IsInteger():
		v.errorf(v.pos, "atomic %s on %q needs integer elements, not %s", e.Op, e.Array.Name, elem)
		return Invalid
	}
	if val != Invalid && val != elem {
		v.errorf(v.pos, "atomic %s on %q, whose elements are %s, with a %s value; convert the value", e.Op, e.Array.Name, elem, val)
	}
	switch {
	case e.Op == AtomicCAS && e.Compare == nil:
		v.errorf(v.pos, "atomic cas on %q has no compare value", e.Array.Name)
	case e.Op != AtomicCAS && e.Compare != nil:
		v.errorf(v.pos, "atomic %s on %q has a compare value; only cas takes one", e.Op, e.Array.Name)
	case e.Compare != nil && cmp != Invalid && cmp != elem:
		v.errorf(v.pos, "atomic cas on %q, whose elements are %s, with a %s compare value; convert it", e.Array.Name, elem, cmp)
	}
	return elem
}

func posText(p Pos) string {
	if p.IsKnown() {
		return p.String()
	}
	return "an unknown position"
}

func varName(x *Var) string {
	if x == nil {
		return "<nil>"
	}
	if x.Name == "" {
		return "v#" + strconv.Itoa(x.ID)
	}
	return x.Name
}

func paramName(p *Param) string {
	if p == nil {
		return "<nil>"
	}
	return p.Name
}
