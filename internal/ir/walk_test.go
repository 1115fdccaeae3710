package ir_test

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/quadrants-go/qd/internal/ir"
)

func TestInspectOrder(t *testing.T) {
	b := NewBuilder("w")
	a := b.Array("a", I32, 1)
	b.Group(func() {
		b.Parallel(LenOf(a, 0), func(i *Var) {
			b.If(Op(Lt, Ref(i), I64c(2)), func() { b.Store(a, I32c(1), Ref(i)) }, func() { b.Do(AtomicE(AtomicAdd, a, I32c(1), Ref(i))) })
		})
	})
	var got []string
	Inspect(b.Kernel().Body, func(n Node) bool {
		got = append(got, strings.TrimPrefix(fmt.Sprintf("%T", n), "*ir."))
		_, isIf := n.(*If)
		return !isIf || len(got) < 100
	})
	want := "StreamParallel ParallelFor Len If Binary VarRef Const Store VarRef Const ExprStmt Atomic VarRef Const"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("order\n%s\nwant\n%s", s, want)
	}
	// Returning false prunes a node's children.
	n := 0
	Inspect(b.Kernel().Body, func(Node) bool { n++; return false })
	if n != 1 {
		t.Errorf("pruned walk visited %d nodes", n)
	}
}

func TestVarsUsed(t *testing.T) {
	b := NewBuilder("v")
	a := b.Array("a", I64, 1)
	x := b.Decl("x", I64c(0))
	var iv *Var
	b.Parallel(LenOf(a, 0), func(i *Var) {
		iv = i
		b.Store(a, Ref(x), Ref(i))
	})
	b.Assign(x, I64c(1))
	var got []string
	VarsUsed(b.Kernel().Body, func(v *Var, assigned bool) { got = append(got, fmt.Sprint(v.Name, assigned)) })
	if s := strings.Join(got, " "); s != "xfalse ifalse ifalse xfalse xtrue" {
		t.Errorf("got %s (i is %v)", s, iv.Name)
	}
}
