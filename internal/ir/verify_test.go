package ir_test

import (
	"errors"
	"strings"
	"testing"

	. "github.com/quadrants-go/qd/internal/ir"
)

func at(line int) Pos { return Pos{File: "k.go", Line: line, Col: 3} }

// env is a kernel under construction with one parameter of each kind.
type env struct {
	b          *Builder
	s, n       *Param // f32, i32 scalars
	fa, ia, ba *Param // [1]f32, [1]i32, [1]bool
	m          *Param // [2]f64
}

func newEnv() *env {
	b := NewBuilder("k")
	return &env{b: b, s: b.Scalar("s", F32), n: b.Scalar("n", I32),
		fa: b.Array("fa", F32, 1), ia: b.Array("ia", I32, 1), ba: b.Array("ba", Bool, 1), m: b.Array("m", F64, 2)}
}

type verifyCase struct {
	name  string
	build func(e *env)
	want  string // substring of the first error; "" means valid
	line  int
}

// exprAt evaluates x in an expression statement at line 5.
func exprAt(x func(e *env) Expr) func(e *env) {
	return func(e *env) { e.b.At(at(5)).Do(x(e)) }
}

func i0() Expr { return I64c(0) }

// recStore adds a record array r {A f32; B i32} and, at line 5, a store of
// v to leaf of r[0].
func recStore(e *env, leaf int, v Expr) {
	r := e.b.Array("r", Invalid, 1)
	r.Rec = &Record{Name: "P", Size: 8, Align: 4, Leaves: []Leaf{{".A", F32, 0}, {".B", I32, 4}}}
	k := e.b.Kernel()
	k.Body = append(k.Body, &Store{Pos: at(5), Array: r, Index: []Expr{I64c(0)}, Leaf: leaf, Value: v})
}

func TestVerify(t *testing.T) {
	cases := []verifyCase{
		// Kernel and parameters.
		{"empty name", func(e *env) { e.b.Kernel().Name = "" }, "kernel has no name", 0},
		{"bad name", func(e *env) { e.b.Kernel().Name = "1k" }, `kernel name "1k" is not a valid identifier`, 0},
		{"blank name", func(e *env) { e.b.Kernel().Name = "_" }, "not a valid identifier", 0},
		{"keyword name", func(e *env) { e.b.Kernel().Name = "func" }, "not a valid identifier", 0},
		{"duplicate param", func(e *env) { e.b.At(at(1)).Scalar("s", I32) }, `parameter "s" is declared twice`, 1},
		{"blank params", func(e *env) { e.b.Scalar("_", I32); e.b.Scalar("_", I32) }, "", 0},
		{"param name", func(e *env) { e.b.At(at(1)).Scalar("a-b", I32) }, `parameter name "a-b" is not a valid identifier`, 1},
		{"param type", func(e *env) { e.b.At(at(1)).Scalar("z", Invalid) }, `parameter "z" has invalid type`, 1},
		{"param dims", func(e *env) { e.b.At(at(1)).Array("z", I32, 5) }, "has 5 dimensions; arrays have 1 to 4", 1},
		{"record with elem", func(e *env) {
			z := e.b.At(at(1)).Array("z", I32, 1)
			z.Rec = &Record{Name: "P", Size: 8, Align: 4, Leaves: []Leaf{{".A", F32, 0}, {".B", I32, 4}}}
		}, "has a record layout and element type i32", 1},
		{"record overlap", func(e *env) {
			z := e.b.At(at(1)).Array("z", Invalid, 1)
			z.Rec = &Record{Name: "P", Size: 8, Align: 4, Leaves: []Leaf{{".A", F64, 0}, {".B", I32, 4}}}
		}, "leaf .B of P at offset 4 (4 bytes) overlaps", 1},
		{"record misaligned", func(e *env) {
			z := e.b.At(at(1)).Array("z", Invalid, 1)
			z.Rec = &Record{Name: "P", Size: 8, Align: 4, Leaves: []Leaf{{".A", I16, 0}, {".B", I32, 2}}}
		}, "leaf .B of P at offset 2 (4 bytes) overlaps, is misaligned", 1},
		{"leaf out of range", func(e *env) { recStore(e, 2, F32c(1)) }, `store to "r" at leaf 2; its elements have 2`, 5},
		{"leaf type", func(e *env) { recStore(e, 1, F32c(1)) }, "cannot store a f32 value into", 5},
		{"leaf store", func(e *env) { recStore(e, 1, I32c(1)) }, "", 0},
		{"small arithmetic", exprAt(func(e *env) Expr { return Op(Add, Conv(I8, P(e.n)), Conv(I8, P(e.n))) }), "8- and 16-bit values are computed with in 32 bits", 5},
		{"small extent", func(e *env) {
			e.b.At(at(5)).Parallel(Conv(U8, P(e.n)), func(*Var) {})
		}, "extents are 32- or 64-bit integers", 5},
		{"bitcast size", exprAt(func(e *env) Expr { return &Bitcast{X: P(e.s), To: U64} }), "bit cast of f32 to u64", 5},
		{"param index", func(e *env) { e.b.At(at(1)).Scalar("z", I32).Index = 0 }, `parameter "z" has Index 0 but is parameter 6`, 1},
		{"nil param", func(e *env) { e.b.Kernel().Params = append(e.b.Kernel().Params, nil) }, "parameter 6 is nil", 0},

		// Binary operators.
		{"mixed types", exprAt(func(e *env) Expr { return Op(Add, P(e.s), P(e.n)) }), "operator + has operands of types f32 and i32", 5},
		{"add bool", exprAt(func(e *env) Expr { return Op(Add, BoolC(true), BoolC(false)) }), "operator + is not defined on bool", 5},
		{"rem float", exprAt(func(e *env) Expr { return Op(Rem, P(e.s), P(e.s)) }), "operator % is not defined on f32", 5},
		{"and float", exprAt(func(e *env) Expr { return Op(And, P(e.s), P(e.s)) }), "operator & is not defined on f32", 5},
		{"andnot float", exprAt(func(e *env) Expr { return Op(AndNot, P(e.s), P(e.s)) }), "operator &^ is not defined", 5},
		{"shift float", exprAt(func(e *env) Expr { return Op(Shl, P(e.s), P(e.n)) }), "shift << needs integer operands, got f32 and i32", 5},
		{"shift count float", exprAt(func(e *env) Expr { return Op(Shr, P(e.n), P(e.s)) }), "shift >> needs integer operands", 5},
		{"shift mixed ints", exprAt(func(e *env) Expr { return Op(Shl, P(e.n), U64c(3)) }), "", 0},
		{"less bool", exprAt(func(e *env) Expr { return Op(Lt, BoolC(true), BoolC(false)) }), "operator < is not defined on bool", 5},
		{"eq bool", exprAt(func(e *env) Expr { return Op(Eq, BoolC(true), BoolC(false)) }), "", 0},
		{"eq mixed", exprAt(func(e *env) Expr { return Op(Eq, P(e.n), I64c(1)) }), "operator == has operands of types i32 and i64", 5},
		{"land int", exprAt(func(e *env) Expr { return Op(LAnd, P(e.n), P(e.n)) }), "operator && is not defined on i32", 5},
		{"min mixed", exprAt(func(e *env) Expr { return Op(Min, P(e.s), F64c(1)) }), "operator min has operands", 5},
		{"unknown binop", exprAt(func(e *env) Expr { return Op(BinOp(99), P(e.n), P(e.n)) }), "unknown binary operator 99", 5},
		{"nil operand", exprAt(func(e *env) Expr { return Op(Add, P(e.n), nil) }), "missing right operand of +", 5},

		// Unary operators.
		{"not int", exprAt(func(e *env) Expr { return Un(Not, P(e.n)) }), "operator ! is not defined on i32", 5},
		{"bitnot float", exprAt(func(e *env) Expr { return Un(BitNot, P(e.s)) }), "operator ^ is not defined on f32", 5},
		{"neg bool", exprAt(func(e *env) Expr { return Un(Neg, BoolC(true)) }), "operator - is not defined on bool", 5},
		{"neg unsigned", exprAt(func(e *env) Expr { return Un(Neg, U32c(1)) }), "", 0},
		{"unknown unop", exprAt(func(e *env) Expr { return Un(UnOp(9), P(e.n)) }), "unknown unary operator 9", 5},

		// Conversions, selects, calls.
		{"convert to bool", exprAt(func(e *env) Expr { return Conv(Bool, P(e.n)) }), "conversion to bool is not allowed", 5},
		{"convert from bool", exprAt(func(e *env) Expr { return Conv(I32, BoolC(true)) }), "conversion from bool to i32 is not allowed", 5},
		{"convert to invalid", exprAt(func(e *env) Expr { return Conv(Type(42), P(e.n)) }), "conversion to invalid type", 5},
		{"select cond", exprAt(func(e *env) Expr { return Sel(P(e.n), P(e.s), P(e.s)) }), "select condition has type i32, want bool", 5},
		{"select arms", exprAt(func(e *env) Expr { return Sel(BoolC(true), P(e.s), P(e.n)) }), "select arms have types f32 and i32", 5},
		{"call arity", exprAt(func(e *env) Expr { return Fn(Pow, P(e.s)) }), "pow takes 2 arguments, got 1", 5},
		{"call int", exprAt(func(e *env) Expr { return Fn(Sqrt, P(e.n)) }), "sqrt needs float arguments, got i32", 5},
		{"call mixed", exprAt(func(e *env) Expr { return Fn(Atan2, P(e.s), F64c(1)) }), "atan2 has arguments of types f32 and f64", 5},
		{"call unknown", exprAt(func(e *env) Expr { return Fn(Intrinsic(200), P(e.s)) }), "unknown intrinsic", 5},

		// Arrays and parameters.
		{"load scalar", exprAt(func(e *env) Expr { return Ld(e.s, i0()) }), `load from "s", which is a scalar parameter`, 5},
		{"load index count", exprAt(func(e *env) Expr { return Ld(e.m, i0()) }), `load from "m" with 1 indices; it has 2 dimensions`, 5},
		{"load float index", exprAt(func(e *env) Expr { return Ld(e.fa, P(e.s)) }), `index 0 of "fa" has type f32`, 5},
		{"load any int index", exprAt(func(e *env) Expr { return Ld(e.m, P(e.n), U32c(1)) }), "", 0},
		{"store type", func(e *env) { e.b.At(at(6)).Store(e.ia, P(e.s), i0()) }, `cannot store a f32 value into ia, whose elements are i32`, 6},
		{"store scalar", func(e *env) { e.b.At(at(6)).Store(e.n, P(e.n)) }, `store to "n", which is a scalar`, 6},
		{"paramref array", exprAt(func(e *env) Expr { return P(e.fa) }), `array parameter "fa" used as a scalar`, 5},
		{"len dim", exprAt(func(e *env) Expr { return LenOf(e.m, 2) }), `len of dimension 2 of "m", which has 2 dimensions`, 5},
		{"len scalar", exprAt(func(e *env) Expr { return LenOf(e.s, 0) }), `len of dimension 0 of "s", which has 0`, 5},
		{"foreign param", exprAt(func(e *env) Expr { return P(&Param{Name: "z", Elem: F32}) }), `parameter "z" is not a parameter of this kernel`, 5},
		{"nil param ref", exprAt(func(e *env) Expr { return &ParamRef{} }), "reference to a nil parameter", 5},

		// Atomics.
		{"atomic and float", exprAt(func(e *env) Expr { return AtomicE(AtomicAnd, e.fa, P(e.s), i0()) }), `atomic and on "fa" needs integer elements, not f32`, 5},
		{"atomic xor int", exprAt(func(e *env) Expr { return AtomicE(AtomicXor, e.ia, P(e.n), i0()) }), "", 0},
		{"atomic max float", exprAt(func(e *env) Expr { return AtomicE(AtomicMax, e.fa, P(e.s), i0()) }), "", 0},
		{"atomic bool", exprAt(func(e *env) Expr { return AtomicE(AtomicExchange, e.ba, BoolC(true), i0()) }), "atomics on bool arrays are not supported", 5},
		{"atomic value", exprAt(func(e *env) Expr { return AtomicE(AtomicAdd, e.ia, P(e.s), i0()) }), `atomic add on "ia", whose elements are i32, with a f32 value`, 5},
		{"cas no compare", exprAt(func(e *env) Expr { return AtomicE(AtomicCAS, e.ia, P(e.n), i0()) }), "atomic cas on \"ia\" has no compare value", 5},
		{"cas", exprAt(func(e *env) Expr {
			return &Atomic{Op: AtomicCAS, Array: e.ia, Index: []Expr{i0()}, Value: P(e.n), Compare: I32c(0)}
		}), "", 0},
		{"cas compare type", exprAt(func(e *env) Expr {
			return &Atomic{Op: AtomicCAS, Array: e.ia, Index: []Expr{i0()}, Value: P(e.n), Compare: I64c(0)}
		}), "with a i64 compare value", 5},
		{"add with compare", exprAt(func(e *env) Expr {
			return &Atomic{Op: AtomicAdd, Array: e.ia, Index: []Expr{i0()}, Value: P(e.n), Compare: I32c(0)}
		}), "only cas takes one", 5},
		{"atomic unknown", exprAt(func(e *env) Expr { return AtomicE(AtomicOp(0), e.ia, P(e.n), i0()) }), "unknown atomic operation", 5},
		{"atomic scalar", exprAt(func(e *env) Expr { return AtomicE(AtomicAdd, e.n, P(e.n)) }), `atomic add on "n", which is a scalar`, 5},

		// Constants.
		{"bool bits", exprAt(func(e *env) Expr { return &Const{T: Bool, Bits: 2} }), "bool constant has non-canonical bits 0x2", 5},
		{"i32 bits", exprAt(func(e *env) Expr { return &Const{T: I32, Bits: 0xffffffff} }), "i32 constant has non-canonical bits", 5},
		{"i32 negative", exprAt(func(e *env) Expr { return I32c(-1) }), "", 0},
		{"u32 bits", exprAt(func(e *env) Expr { return &Const{T: U32, Bits: 1 << 32} }), "u32 constant has non-canonical bits", 5},
		{"i8 bits", exprAt(func(e *env) Expr { return &Const{T: I8, Bits: 0x80} }), "i8 constant has non-canonical bits", 5},
		{"u16 bits", exprAt(func(e *env) Expr { return &Const{T: U16, Bits: 1 << 16} }), "u16 constant has non-canonical bits", 5},
		{"small constants", func(e *env) {
			k := e.b.Kernel()
			for _, c := range []Expr{IntC(I8, -128), IntC(I16, -1), IntC(U8, 255), IntC(U16, 65535)} {
				k.Body = append(k.Body, &Decl{Pos: at(5), Var: e.b.NewVar("c", c.Type()), Init: c})
			}
		}, "", 0},
		{"f32 bits", exprAt(func(e *env) Expr { return &Const{T: F32, Bits: 1 << 40} }), "f32 constant has non-canonical", 5},
		{"const type", exprAt(func(e *env) Expr { return &Const{T: Invalid} }), "constant of invalid type", 5},

		// Statements.
		{"decl type", func(e *env) {
			e.b.At(at(4)).Kernel().Body = append(e.b.Kernel().Body, &Decl{Pos: at(4), Var: &Var{Name: "v", Type: I64, ID: 1}, Init: I32c(1)})
		},
			"variable v of type i64 is initialised with a i32 value", 4},
		{"decl invalid type", func(e *env) { e.b.At(at(4)).DeclZero("v", Invalid) }, "variable v has invalid type", 4},
		{"assign type", func(e *env) { v := e.b.Decl("v", I32c(0)); e.b.At(at(4)).Assign(v, P(e.s)) }, "cannot assign a f32 value to variable v of type i32", 4},
		{"if cond", func(e *env) { e.b.At(at(4)).If(P(e.n), func() {}, nil) }, "if condition has type i32, want bool", 4},
		{"for cond", func(e *env) { e.b.At(at(4)).While(P(e.n), func() { e.b.Break() }) }, "for condition has type i32, want bool", 4},
		{"for init if", func(e *env) {
			f := e.b.At(at(4)).While(nil, func() {})
			f.Init = []Stmt{&If{Cond: BoolC(true)}}
		}, "Init may hold only declarations", 4},
		{"for post decl", func(e *env) {
			f := e.b.At(at(4)).While(nil, func() {})
			f.Post = []Stmt{&Decl{Var: e.b.NewVar("p", I32)}}
		}, "Post may hold only assignments", 4},
		{"nil statement", func(e *env) { e.b.Kernel().Body = append(e.b.Kernel().Body, nil) }, "nil statement", 0},
		{"nil var", func(e *env) { e.b.Kernel().Body = append(e.b.Kernel().Body, &Assign{Pos: at(4), Value: I32c(0)}) }, "reference to a nil variable", 4},
		{"nil store value", func(e *env) { e.b.At(at(4)).Store(e.ia, nil, i0()) }, "missing stored value", 4},
		{"nil exprstmt", func(e *env) { e.b.At(at(4)).Do(nil) }, "missing expression statement", 4},

		// Scopes.
		{"use before decl", func(e *env) {
			v := e.b.NewVar("v", I32)
			e.b.At(at(3)).Do(Ref(v))
			e.b.At(at(4)).Kernel().Body = append(e.b.Kernel().Body, &Decl{Pos: at(4), Var: v})
		}, "variable v is used before its declaration at k.go:4:3", 3},
		{"self init", func(e *env) {
			v := e.b.NewVar("v", I32)
			e.b.Kernel().Body = append(e.b.Kernel().Body, &Decl{Pos: at(4), Var: v, Init: Ref(v)})
		}, "variable v is used before its declaration", 4},
		{"out of scope", func(e *env) {
			var v *Var
			e.b.At(at(2)).If(BoolC(true), func() { v = e.b.Decl("v", I32c(1)) }, nil)
			e.b.At(at(4)).Do(Ref(v))
		}, "variable v is used outside the block that declares it (at k.go:2:3)", 4},
		{"then decl not in else", func(e *env) {
			var v *Var
			e.b.At(at(2)).If(BoolC(true), func() { v = e.b.Decl("v", I32c(1)) }, func() { e.b.At(at(3)).Do(Ref(v)) })
		}, "outside the block", 3},
		{"never declared", exprAt(func(e *env) Expr { return Ref(e.b.NewVar("ghost", I32)) }), "variable ghost is never declared", 5},
		{"declared twice", func(e *env) {
			v := e.b.At(at(2)).Decl("v", I32c(1))
			e.b.At(at(3)).Kernel().Body = append(e.b.Kernel().Body, &Decl{Pos: at(3), Var: v})
		}, "variable v is declared twice (first at k.go:2:3)", 3},
		{"duplicate id", func(e *env) {
			e.b.Decl("v", I32c(1))
			e.b.Kernel().Body = append(e.b.Kernel().Body, &Decl{Pos: at(3), Var: &Var{Name: "w", Type: I32, ID: 1}})
		}, "variables v and w share ID 1", 3},
		{"for init scope", func(e *env) {
			var v *Var
			e.b.At(at(2)).ForRange("i", I32c(3), func(i *Var) { v = i; e.b.Do(Ref(i)) })
			e.b.At(at(4)).Do(Ref(v))
		}, "variable i is used outside the block", 4},
		{"parallel var scope", func(e *env) {
			var v *Var
			e.b.At(at(2)).Parallel(LenOf(e.fa, 0), func(i *Var) { v = i })
			e.b.At(at(4)).Do(Ref(v))
		}, "variable i is used outside the block", 4},
		{"parallel var in extent", func(e *env) {
			pf := e.b.At(at(2)).Parallel(LenOf(e.fa, 0), func(*Var) {})
			pf.Extents[0] = Ref(pf.Vars[0])
		}, "variable i is used before its declaration", 2},
		{"assign parallel var", func(e *env) {
			e.b.At(at(2)).Parallel(LenOf(e.fa, 0), func(i *Var) { e.b.At(at(3)).Assign(i, I64c(0)) })
		}, "cannot assign to parallel loop variable i", 3},
		{"outer local in loop", func(e *env) {
			v := e.b.Decl("v", I64c(1))
			e.b.Parallel(LenOf(e.fa, 0), func(i *Var) {
				e.b.If(BoolC(true), func() { e.b.Store(e.m, F64c(0), Ref(i), Ref(v)) }, nil)
			})
		}, "", 0},

		// Break and continue.
		{"break outside", func(e *env) { e.b.At(at(3)).Break() }, "break outside a for loop", 3},
		{"continue outside", func(e *env) { e.b.At(at(3)).Continue() }, "continue outside a for loop", 3},
		{"break in parallel", func(e *env) {
			e.b.Parallel(LenOf(e.fa, 0), func(*Var) { e.b.At(at(3)).Break() })
		}, "break cannot leave a parallel loop", 3},
		{"continue in parallel", func(e *env) {
			e.b.Parallel(LenOf(e.fa, 0), func(*Var) { e.b.At(at(3)).Continue() })
		}, "continue directly in a parallel loop's body", 3},
		{"break to outer across parallel", func(e *env) {
			var outer *For
			outer = e.b.At(at(1)).While(nil, func() {
				e.b.Parallel(LenOf(e.fa, 0), func(*Var) {
					e.b.While(nil, func() { e.b.At(at(3)).Break() })
				})
				e.b.Break()
			})
			outer.Body[0].(*ParallelFor).Body[0].(*For).Body[0].(*Break).Loop = outer
		}, "break cannot leave a parallel loop or stream-parallel block for the enclosing for loop at k.go:1:3", 3},
		{"break in group", func(e *env) {
			e.b.At(at(1)).While(nil, func() {
				e.b.Group(func() { e.b.At(at(3)).Break() })
			})
		}, "break outside a for loop", 3},
		{"break to sibling", func(e *env) {
			first := e.b.At(at(1)).While(nil, func() { e.b.Break() })
			e.b.At(at(2)).While(nil, func() { e.b.At(at(3)).Break() })
			e.b.Kernel().Body[1].(*For).Body[0].(*Break).Loop = first
		}, "break targets the for loop at k.go:1:3, which does not enclose it", 3},
		{"labelled continue", func(e *env) {
			outer := e.b.While(nil, func() {
				e.b.While(nil, func() { e.b.Continue() })
			})
			outer.Body[0].(*For).Body[0].(*Continue).Loop = outer
		}, "", 0},

		// Parallel loops.
		{"no vars", func(e *env) { e.b.Kernel().Body = append(e.b.Kernel().Body, &ParallelFor{Pos: at(2)}) }, "parallel loop has 0 variables; it needs 1 to 3", 2},
		{"four dims", func(e *env) {
			x := LenOf(e.fa, 0)
			e.b.At(at(2)).ParallelN([]Expr{x, x, x, x}, func([]*Var) {})
		}, "parallel loop has 4 variables", 2},
		{"extents count", func(e *env) {
			pf := e.b.At(at(2)).Parallel(LenOf(e.fa, 0), func(*Var) {})
			pf.Extents = append(pf.Extents, I64c(1))
		}, "parallel loop has 1 variables but 2 extents", 2},
		{"float extent", func(e *env) { e.b.At(at(2)).Parallel(P(e.s), func(*Var) {}) }, "parallel loop extent 0 has type f32", 2},
		{"var type", func(e *env) {
			pf := e.b.At(at(2)).Parallel(LenOf(e.fa, 0), func(*Var) {})
			pf.Vars[0].Type = I32
		}, "parallel loop variable i has type i32 but its extent has type i64", 2},
		{"atomic extent", func(e *env) {
			e.b.At(at(2)).Parallel(Conv(I64, AtomicE(AtomicAdd, e.ia, I32c(1), i0())), func(*Var) {})
		}, "parallel loop extent 0 holds an atomic operation", 2},
		{"block dim negative", func(e *env) { e.b.At(at(2)).Parallel(LenOf(e.fa, 0), func(*Var) {}).BlockDim = -1 }, "block dim -1 is negative", 2},
		{"block dim large", func(e *env) { e.b.At(at(2)).Parallel(LenOf(e.fa, 0), func(*Var) {}).BlockDim = 2048 }, "GPUs run at most 1024 threads per block", 2},
		{"block dim one", func(e *env) { e.b.Parallel(LenOf(e.fa, 0), func(*Var) {}).BlockDim = 1 }, "", 0},
		{"block dim max", func(e *env) { e.b.Parallel(LenOf(e.fa, 0), func(*Var) {}).BlockDim = 1024 }, "", 0},
		{"nil parallel var", func(e *env) {
			e.b.Kernel().Body = append(e.b.Kernel().Body, &ParallelFor{Pos: at(2), Vars: []*Var{nil}, Extents: []Expr{I64c(1)}})
		}, "declaration of a nil variable", 2},

		// Placement is lowering's business: these verify.
		{"parallel in if", func(e *env) {
			e.b.If(BoolC(true), func() { e.b.Parallel(LenOf(e.fa, 0), func(*Var) {}) }, nil)
		}, "", 0},
		{"nested groups", func(e *env) {
			e.b.While(nil, func() {
				e.b.Group(func() { e.b.Group(func() { e.b.Parallel(LenOf(e.fa, 0), func(*Var) {}) }) })
				e.b.Break()
			})
		}, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv()
			c.build(e)
			err := Verify(e.b.Kernel())
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v\n%s", err, Print(e.b.Kernel()))
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q\n%s", c.want, Print(e.b.Kernel()))
			}
			var first *Error
			if !errors.As(err, &first) {
				t.Fatalf("%T is not an *Error: %v", err, err)
			}
			if !strings.Contains(first.Msg, c.want) {
				t.Errorf("first error %q, want %q (all: %v)", first.Msg, c.want, err)
			}
			if first.Pos.Line != c.line {
				t.Errorf("first error at line %d, want %d: %v", first.Pos.Line, c.line, first)
			}
			if first.Kernel != e.b.Kernel().Name {
				t.Errorf("error names kernel %q", first.Kernel)
			}
		})
	}
}

// TestVerifyAll: every error comes back, joined in source order, and
// an operand's error is not repeated by the operators above it.
func TestVerifyAll(t *testing.T) {
	e := newEnv()
	e.b.At(at(1)).Do(Op(Add, Op(Mul, P(e.s), P(e.n)), P(e.s))) // one error, not two
	e.b.At(at(2)).Do(Un(Not, P(e.n)))
	e.b.At(at(3)).Store(e.ia, P(e.s), i0())
	err := Verify(e.b.Kernel())
	var j interface{ Unwrap() []error }
	if !errors.As(err, &j) {
		t.Fatalf("want joined errors, got %v", err)
	}
	errs := j.Unwrap()
	if len(errs) != 3 {
		t.Fatalf("want 3 errors, got %d: %v", len(errs), err)
	}
	for i, x := range errs {
		if x.(*Error).Pos.Line != i+1 {
			t.Errorf("error %d at %v", i, x.(*Error).Pos)
		}
	}
	if !strings.HasPrefix(errs[0].Error(), "k.go:1:3: kernel k: operator * has operands") {
		t.Errorf("format: %q", errs[0].Error())
	}
}

func TestVerifyTooMany(t *testing.T) {
	e := newEnv()
	for i := range 30 {
		e.b.At(at(i + 1)).Do(Un(Not, P(e.n)))
	}
	var j interface{ Unwrap() []error }
	if !errors.As(Verify(e.b.Kernel()), &j) {
		t.Fatal("want joined errors")
	}
	errs := j.Unwrap()
	if len(errs) != 11 || !strings.Contains(errs[10].Error(), "too many errors") {
		t.Errorf("got %d errors, last %v", len(errs), errs[len(errs)-1])
	}
}

func TestVerifyNil(t *testing.T) {
	if err := Verify(nil); err == nil {
		t.Error("nil kernel verifies")
	}
}

// TestVerifyNoPanic feeds nil fields everywhere.
func TestVerifyNoPanic(t *testing.T) {
	var nilExprs = []Expr{nil, &Unary{}, &Binary{}, &Convert{}, &Select{}, &Call{}, &Load{}, &Atomic{}, &Len{}, &ParamRef{}, &VarRef{}, &Call{Fn: Sqrt, Args: []Expr{nil}}}
	var body []Stmt
	for _, x := range nilExprs {
		body = append(body, &ExprStmt{X: x}, &Decl{Init: x}, &Assign{Value: x}, &Store{Value: x, Index: []Expr{x}},
			&If{Cond: x, Then: []Stmt{nil}}, &For{Cond: x, Init: []Stmt{nil}, Post: []Stmt{nil}},
			&ParallelFor{Extents: []Expr{x}, Vars: []*Var{nil, nil}}, &StreamParallel{Body: []Stmt{&Break{}, &Continue{}}})
	}
	k := &Kernel{Name: "p", Params: []*Param{nil, {Name: "", Elem: Type(77), Dims: -1}}, Body: body}
	if Verify(k) == nil {
		t.Error("no errors")
	}
	_ = Print(k)
	_ = HashKernel(k)
}

// TestVerifyFull: a kernel using every kind of node verifies.
func TestVerifyFull(t *testing.T) {
	if err := Verify(fullKernel()); err != nil {
		t.Fatal(err)
	}
}
