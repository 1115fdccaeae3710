package ir_test

import (
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// variant describes a kernel by options, so that each test changes one thing.
type variant struct {
	name      string
	param     string
	elem      ir.Type
	dims      int
	constant  float32
	op        ir.BinOp
	blockDim  int
	idOffset  int // burn Var IDs first: absolute IDs must not matter
	line      int // position base: positions must not matter
	varName   string
	swapOrder bool // swap the two statements of the serial prologue
	groups    [][]int
	useOther  bool // read local u instead of t in the last store
}

func base() variant {
	return variant{name: "k", param: "x", elem: ir.F32, dims: 1, constant: 2, op: ir.Mul,
		line: 1, varName: "t", groups: nil}
}

// build makes a kernel: a serial prologue declaring t and u, then three loops
// (0, 1, 2) either at the top level or distributed over groups as v.groups
// lists them.
func (v variant) build() *ir.Kernel {
	b := ir.NewBuilder(v.name)
	for range v.idOffset {
		b.NewVar("burn", ir.I32)
	}
	pos := func(n int) ir.Pos { return ir.Pos{File: "f.go", Line: v.line + n, Col: 1} }
	x := b.At(pos(0)).Array(v.param, v.elem, v.dims)
	idx := func(i ir.Expr) []ir.Expr {
		out := []ir.Expr{i}
		for len(out) < v.dims {
			out = append(out, ir.I64c(0))
		}
		return out
	}
	loop := func(n int, tv, uv *ir.Var) {
		c := ir.Conv(v.elem, ir.F32c(v.constant+float32(n))) // loops differ
		pf := b.At(pos(10+n)).Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
			val := ir.Op(v.op, ir.Ld(x, idx(ir.Ref(i))...), c)
			src := tv
			if v.useOther && n == 2 {
				src = uv
			}
			val = ir.Op(ir.Add, val, ir.Conv(v.elem, ir.Ref(src)))
			b.At(pos(11+n)).Store(x, val, idx(ir.Ref(i))...)
		})
		if n == 0 {
			pf.BlockDim = v.blockDim
		}
	}
	if v.groups == nil {
		var tv, uv *ir.Var
		if v.swapOrder {
			uv = b.At(pos(1)).Decl("u", ir.I32c(5))
			tv = b.At(pos(2)).Decl(v.varName, ir.I32c(3))
		} else {
			tv = b.At(pos(1)).Decl(v.varName, ir.I32c(3))
			uv = b.At(pos(2)).Decl("u", ir.I32c(5))
		}
		for n := range 3 {
			loop(n, tv, uv)
		}
		return b.Kernel()
	}
	for _, g := range v.groups {
		b.At(pos(3)).Group(func() {
			tv := b.Decl(v.varName, ir.I32c(3))
			uv := b.Decl("u", ir.I32c(5))
			for _, n := range g {
				loop(n, tv, uv)
			}
		})
	}
	return b.Kernel()
}

func TestHashEqual(t *testing.T) {
	ref := ir.HashKernel(base().build())
	if ref != ir.HashKernel(base().build()) {
		t.Fatal("hash is not deterministic")
	}
	same := map[string]func(*variant){
		"var IDs":   func(v *variant) { v.idOffset = 17 },
		"positions": func(v *variant) { v.line = 100 },
		"var names": func(v *variant) { v.varName = "renamed" },
	}
	for name, f := range same {
		v := base()
		f(&v)
		if err := ir.Verify(v.build()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := ir.HashKernel(v.build()); got != ref {
			t.Errorf("%s changed the hash", name)
		}
	}
}

func TestHashDiffers(t *testing.T) {
	grouped := base()
	grouped.groups = [][]int{{0, 1}, {2}}
	diff := map[string]func(*variant){
		"kernel name":         func(v *variant) { v.name = "k2" },
		"param name":          func(v *variant) { v.param = "y" },
		"param type":          func(v *variant) { v.elem = ir.F64 },
		"param dims":          func(v *variant) { v.dims = 2 },
		"constant":            func(v *variant) { v.constant = 3 },
		"operator":            func(v *variant) { v.op = ir.Add },
		"block dim":           func(v *variant) { v.blockDim = 128 },
		"statement order":     func(v *variant) { v.swapOrder = true },
		"which local is read": func(v *variant) { v.useOther = true },
		"grouping":            func(v *variant) { v.groups = [][]int{{0, 1}, {2}} },
	}
	seen := map[ir.Hash]string{ir.HashKernel(base().build()): "base"}
	for name, f := range diff {
		v := base()
		f(&v)
		k := v.build()
		if err := ir.Verify(k); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := ir.HashKernel(k)
		if prev, dup := seen[h]; dup {
			t.Errorf("%s: same hash as %s", name, prev)
		}
		seen[h] = name
	}
	// Moving a loop between groups, splitting and merging groups.
	groupings := map[string][][]int{
		"{0 1} {2}":   {{0, 1}, {2}},
		"{0} {1 2}":   {{0}, {1, 2}},
		"{0} {1} {2}": {{0}, {1}, {2}},
		"{0 1 2}":     {{0, 1, 2}},
		"{0 1 2} {}":  {{0, 1, 2}, {}},
		"{} {0 1 2}":  {{}, {0, 1, 2}},
		"{1 0} {2}":   {{1, 0}, {2}},
	}
	gseen := map[ir.Hash]string{}
	for name, g := range groupings {
		v := base()
		v.groups = g
		h := ir.HashKernel(v.build())
		if prev, dup := gseen[h]; dup {
			t.Errorf("grouping %s: same hash as %s", name, prev)
		}
		gseen[h] = name
	}
}

func TestHashBranchTarget(t *testing.T) {
	build := func(outer bool) *ir.Kernel {
		b := ir.NewBuilder("br")
		o := b.While(nil, func() {
			b.While(nil, func() { b.Break() })
			b.Break()
		})
		if outer {
			o.Body[0].(*ir.For).Body[0].(*ir.Break).Loop = o
		}
		if err := ir.Verify(b.Kernel()); err != nil {
			t.Fatal(err)
		}
		return b.Kernel()
	}
	if ir.HashKernel(build(true)) == ir.HashKernel(build(false)) {
		t.Error("break target does not change the hash")
	}
}

func TestHashString(t *testing.T) {
	h := ir.HashKernel(base().build())
	if s := h.String(); len(s) != 64 {
		t.Errorf("String() = %q", s)
	}
	if s := h.Short(); len(s) != 12 || s != h.String()[:12] {
		t.Errorf("Short() = %q", s)
	}
}

// TestHashMalformed: HashKernel must not panic on kernels Verify rejects.
func TestHashMalformed(t *testing.T) {
	_ = ir.HashKernel(nil)
	k := &ir.Kernel{Name: "m", Params: []*ir.Param{nil}, Body: []ir.Stmt{
		nil,
		&ir.Decl{},
		&ir.Store{Index: []ir.Expr{nil}},
		&ir.ParallelFor{Vars: []*ir.Var{nil}, Extents: []ir.Expr{&ir.Unary{}}},
		&ir.StreamParallel{Body: []ir.Stmt{&ir.Break{}, &ir.ExprStmt{X: &ir.Atomic{}}}},
	}}
	_ = ir.HashKernel(k)
}
