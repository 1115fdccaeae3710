package analysis

import (
	"testing"

	. "github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

func TestUnrollable(t *testing.T) {
	cases := []struct {
		name  string
		body  func(b *Builder, x, y, s *Param, i *Var)
		nodes int // when unrollable
		ok    bool
	}{
		{"saxpy", func(b *Builder, x, y, s *Param, i *Var) {
			b.Store(y, Op(Add, Op(Mul, P(s), Ld(x, Ref(i))), Ld(y, Ref(i))), Ref(i))
		}, 1 + 1 + 7, true}, // the store, its index, Add Mul s Load i Load i
		{"locals", func(b *Builder, x, y, s *Param, i *Var) {
			v := b.Decl("v", Ld(x, Ref(i)))
			b.Assign(v, Fn(Sqrt, Ref(v)))
			b.Store(y, Ref(v), Ref(i))
		}, 3 + 3 + 3, true},
		{"whole reduction", func(b *Builder, x, y, s *Param, i *Var) {
			b.Do(AtomicE(AtomicAdd, y, Ld(x, Ref(i)), I64c(0)))
		}, 1 + 2, true},
		{"innermost reduction is no register", func(b *Builder, x, y, s *Param, i *Var) {
			b.Do(AtomicE(AtomicAdd, y, Ld(x, Ref(i)), Ref(i)))
		}, 0, false},
		{"atomic in a value", func(b *Builder, x, y, s *Param, i *Var) {
			b.Store(x, AtomicE(AtomicAdd, y, F32c(1), I64c(0)), Ref(i))
		}, 0, false},
		{"transcendental", func(b *Builder, x, y, s *Param, i *Var) {
			b.Store(y, Fn(Exp, Ld(x, Ref(i))), Ref(i))
		}, 0, false},
		{"if", func(b *Builder, x, y, s *Param, i *Var) {
			b.If(Op(Lt, Ref(i), I64c(1)), func() { b.Store(y, F32c(0), Ref(i)) }, nil)
		}, 0, false},
		{"serial loop", func(b *Builder, x, y, s *Param, i *Var) {
			b.ForRange("k", I64c(2), func(k *Var) { b.Store(y, F32c(0), Ref(k)) })
		}, 0, false},
	}
	for _, c := range cases {
		plan := lowered(t, func(b *Builder) {
			x, y, s := b.Array("x", F32, 1), b.Array("y", F32, 1), b.Scalar("s", F32)
			b.Parallel(LenOf(y, 0), func(i *Var) { c.body(b, x, y, s, i) })
		})
		nodes, ok := Unrollable(plan, parallelTask(t, plan))
		if ok != c.ok || ok && nodes != c.nodes {
			t.Errorf("%s: Unrollable = %d, %v; want %d, %v", c.name, nodes, ok, c.nodes, c.ok)
		}
	}
}

// A body that assigns a local living across tasks, or a serial task, is
// not unrollable.
func TestUnrollableTemps(t *testing.T) {
	plan := lowered(t, func(b *Builder) {
		y := b.Array("y", I64, 1)
		n := b.Decl("n", I64c(4))
		b.Parallel(LenOf(y, 0), func(i *Var) { b.Store(y, Ref(n), Ref(i)) })
		b.Store(y, Ref(n), I64c(0))
	})
	if _, ok := Unrollable(plan, parallelTask(t, plan)); !ok {
		t.Error("a body that reads a temporary is unrollable")
	}
	for _, task := range plan.Tasks {
		if task.Kind == lower.Serial {
			if _, ok := Unrollable(plan, task); ok {
				t.Error("a serial task is unrollable")
			}
		}
	}
}

func TestCounted(t *testing.T) {
	cases := []struct {
		name  string
		loop  func(b *Builder, x *Param, n *Param) *For
		nodes int // when counted
	}{
		{"for i < n", func(b *Builder, x, n *Param) *For {
			return b.ForRange("i", P(n), func(i *Var) { b.Store(x, Conv(F32, Ref(i)), Ref(i)) })
		}, 1 + 3},
		{"int32 counter", func(b *Builder, x, n *Param) *For {
			return b.ForRange("i", Conv(I32, P(n)), func(i *Var) { b.Store(x, F32c(0), Ref(i)) })
		}, 1 + 2},
		{"uint64 counter", func(b *Builder, x, n *Param) *For {
			return b.ForRange("i", Conv(U64, P(n)), func(i *Var) { b.Store(x, F32c(0), Ref(i)) })
		}, -1},
		{"break", func(b *Builder, x, n *Param) *For {
			return b.ForRange("i", P(n), func(i *Var) { b.Break() })
		}, -1},
		{"sets its counter", func(b *Builder, x, n *Param) *For {
			return b.ForRange("i", P(n), func(i *Var) { b.Assign(i, Ref(i)) })
		}, -1},
		{"bound the body sets", func(b *Builder, x, n *Param) *For {
			m := b.Decl("m", P(n))
			return b.ForRange("i", Ref(m), func(i *Var) { b.Assign(m, Op(Sub, Ref(m), I64c(1))) })
		}, -1},
		{"bound from memory", func(b *Builder, x, n *Param) *For {
			return b.ForRange("i", Conv(I64, Ld(x, I64c(0))), func(i *Var) {})
		}, -1},
		{"while", func(b *Builder, x, n *Param) *For {
			return b.While(Op(Lt, P(n), I64c(3)), func() { b.Break() })
		}, -1},
	}
	for _, c := range cases {
		var loop *For
		plan := lowered(t, func(b *Builder) {
			x, n := b.Array("x", F32, 1), b.Scalar("n", I64)
			loop = c.loop(b, x, n)
		})
		got := Counted(plan, loop)
		switch {
		case c.nodes < 0 && got != nil:
			t.Errorf("%s: counted, want not", c.name)
		case c.nodes >= 0 && got == nil:
			t.Errorf("%s: not counted", c.name)
		case got != nil && (got.Nodes != c.nodes || got.Bound != loop.Cond.(*Binary).Y || got.Var != loop.Init[0].(*Decl).Var):
			t.Errorf("%s: %+v, want %d nodes, the loop's counter and bound", c.name, got, c.nodes)
		}
	}
}
