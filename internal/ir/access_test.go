package ir_test

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/quadrants-go/qd/internal/ir"
)

func TestAccesses(t *testing.T) {
	b := NewBuilder("acc")
	a := b.Array("a", I32, 1)
	c := b.Array("c", I64, 2)
	b.Parallel(LenOf(a, 0), func(i *Var) {
		// c[i][a[i]] = a[a[i]]: the store, its indices' load, then the value's loads.
		b.Store(c, Conv(I64, Ld(a, Ld(a, Ref(i)))), Ref(i), Conv(I64, Ld(a, Ref(i))))
		b.If(Op(Lt, Ref(i), I64c(2)), func() { b.Do(AtomicE(AtomicAdd, a, Ld(a, I64c(0)), Ref(i))) }, nil)
	})
	body := b.Kernel().Body
	for _, tc := range []struct {
		name string
		stop func(Access) bool // returning false prunes the access's operands
		want string
	}{
		{"all", func(Access) bool { return true }, "write c 2, read a 1, read a 1, read a 1, update a 1, read a 1"},
		{"pruned", func(Access) bool { return false }, "write c 2, update a 1"},
		{"reads pruned", func(acc Access) bool { return acc.Kind != AccessRead }, "write c 2, read a 1, read a 1, update a 1, read a 1"},
	} {
		var got []string
		Accesses(body, func(acc Access) bool {
			if acc.Node == nil {
				t.Errorf("%s: access without its node", tc.name)
			}
			got = append(got, fmt.Sprintf("%v %s %d", acc.Kind, acc.Array.Name, len(acc.Index)))
			return tc.stop(acc)
		})
		if s := strings.Join(got, ", "); s != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, s, tc.want)
		}
	}
}

func TestAccessOf(t *testing.T) {
	a := &Param{Name: "a", Elem: F32, Dims: 1}
	i := I64c(0)
	cases := []struct {
		n    Node
		kind AccessKind
		ok   bool
	}{
		{&Load{Array: a, Index: []Expr{i}}, AccessRead, true},
		{&Store{Array: a, Index: []Expr{i}, Value: F32c(1)}, AccessWrite, true},
		{&Atomic{Op: AtomicAdd, Array: a, Index: []Expr{i}, Value: F32c(1)}, AccessUpdate, true},
		{&Len{Array: a}, 0, false},
		{&ExprStmt{X: &Atomic{Array: a}}, 0, false}, // the statement is not the access
		{i, 0, false},
	}
	for _, c := range cases {
		acc, ok := AccessOf(c.n)
		if ok != c.ok || acc.Kind != c.kind || ok && (acc.Array != a || len(acc.Index) != 1 || acc.Node != c.n) {
			t.Errorf("AccessOf(%T) = %+v, %v; want kind %v, %v", c.n, acc, ok, c.kind, c.ok)
		}
	}
}
