package lower

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

func at(line int) ir.Pos { return ir.Pos{File: "k.go", Line: line, Col: 2} }

// saxpy builds y = a*x + y.
func saxpy() *ir.Kernel {
	b := ir.NewBuilder("saxpy")
	a, x, y := b.Scalar("a", ir.F32), b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.At(at(3)).Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.At(at(4)).Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

func mustLower(t *testing.T, k *ir.Kernel) *Plan {
	t.Helper()
	p, err := Lower(k)
	if err != nil {
		t.Fatalf("Lower: %v\n%s", err, ir.Print(k))
	}
	checkInvariants(t, p)
	return p
}

// checkInvariants asserts what every plan promises: indices are positions,
// group tasks carry their group's id, groups' tasks are contiguous and in id
// order, and tasks of a grouped kernel all have a group.
func checkInvariants(t *testing.T, p *Plan) {
	t.Helper()
	last := 0
	for i, task := range p.Tasks {
		if task.Index != i {
			t.Errorf("task %d has Index %d", i, task.Index)
		}
		if p.Groups > 0 && (task.Group < 1 || task.Group > p.Groups) {
			t.Errorf("task %d has group %d in a kernel of %d groups", i, task.Group, p.Groups)
		}
		if p.Groups == 0 && task.Group != 0 {
			t.Errorf("task %d has group %d in a kernel without groups", i, task.Group)
		}
		if task.Group < last {
			t.Errorf("task %d of group %d follows a task of group %d: groups not contiguous or not in id order", i, task.Group, last)
		}
		last = task.Group
		if (task.Kind == Parallel) != (task.Loop != nil) || (task.Kind == Serial) != (len(task.Body) > 0) {
			t.Errorf("task %d: kind %s with Loop %v and %d statements", i, task.Kind, task.Loop != nil, len(task.Body))
		}
		if first := task.Stmts()[0].Position(); task.Pos != first {
			t.Errorf("task %d: Pos %v, first statement at %v", i, task.Pos, first)
		}
	}
	for i, v := range p.Temps {
		if p.TempSlot[v] != i {
			t.Errorf("temp %s: slot %d, position %d", v.Name, p.TempSlot[v], i)
		}
	}
	if len(p.TempSlot) != len(p.Temps) {
		t.Errorf("%d slots for %d temps", len(p.TempSlot), len(p.Temps))
	}
	if p.Hash != ir.HashKernel(p.Kernel) {
		t.Errorf("Plan.Hash is not HashKernel")
	}
}

// shape summarises a plan as "kind@group:line" per task.
func shape(p *Plan) string {
	var parts []string
	for _, t := range p.Tasks {
		s := "S"
		if t.Kind == Parallel {
			s = "P"
		}
		parts = append(parts, s+itoa(t.Group)+":"+itoa(t.Pos.Line))
	}
	return strings.Join(parts, " ")
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestSaxpy(t *testing.T) {
	p := mustLower(t, saxpy())
	if got := shape(p); got != "P0:3" {
		t.Errorf("shape %q", got)
	}
	if p.Groups != 0 || len(p.Temps) != 0 {
		t.Errorf("groups %d temps %d", p.Groups, len(p.Temps))
	}
	if p.Tasks[0].Loop != p.Kernel.Body[0] {
		t.Errorf("task loop is not the kernel's loop")
	}
}

// TestSerialParallelSerial: s := sum before, a loop reading it, a serial tail
// writing it; n only used by the first task stays local.
func TestSerialParallelSerial(t *testing.T) {
	b := ir.NewBuilder("sps")
	x, out := b.Array("x", ir.I64, 1), b.Array("out", ir.I64, 1)
	n := b.At(at(2)).Decl("n", ir.LenOf(x, 0))
	s := b.At(at(3)).Decl("s", ir.I64c(0))
	b.At(at(4)).ForRange("j", ir.Ref(n), func(j *ir.Var) {
		b.At(at(5)).Assign(s, ir.Op(ir.Add, ir.Ref(s), ir.Ld(x, ir.Ref(j))))
	})
	scale := b.At(at(7)).Decl("scale", ir.I64c(2))
	b.At(at(8)).Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.At(at(9)).Store(x, ir.Op(ir.Mul, ir.Ref(s), ir.Ref(scale)), ir.Ref(i))
	})
	b.At(at(11)).Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
		b.At(at(12)).Store(out, ir.Ref(s), ir.Ref(i))
	})
	b.At(at(14)).Store(out, ir.Ref(s), ir.I64c(0))
	unused := b.At(at(15)).Decl("unused", ir.I64c(1))
	b.At(at(16)).Assign(unused, ir.Ref(s))
	p := mustLower(t, b.Kernel())
	if got := shape(p); got != "S0:2 P0:8 P0:11 S0:14" {
		t.Errorf("shape %q", got)
	}
	if len(p.Tasks[0].Body) != 4 || len(p.Tasks[3].Body) != 3 {
		t.Errorf("serial bodies of %d and %d statements", len(p.Tasks[0].Body), len(p.Tasks[3].Body))
	}
	if len(p.Temps) != 2 || p.Temps[0] != s || p.Temps[1] != scale {
		t.Errorf("temps %v, want [s scale]", names(p.Temps))
	}
	if _, ok := p.TempSlot[n]; ok {
		t.Errorf("n is used by one task and must stay local")
	}
}

func names(vs []*ir.Var) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Name)
	}
	return out
}

// TestGroups: 2 groups with several loops and serial statements each, and an
// empty group that takes an id but has no tasks.
func TestGroups(t *testing.T) {
	b := ir.NewBuilder("groups")
	a, c := b.Array("a", ir.F32, 1), b.Array("c", ir.F32, 2)
	b.At(at(2)).Group(func() {
		b.At(at(3)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) { b.At(at(3)).Store(a, ir.F32c(1), ir.Ref(i)) })
		b.At(at(4)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) { b.At(at(4)).Store(a, ir.F32c(2), ir.Ref(i)) })
	})
	b.At(at(6)).Group(func() {})
	b.At(at(7)).Group(func() {
		m := b.At(at(8)).Decl("m", ir.LenOf(c, 1))
		b.At(at(9)).Parallel2(ir.LenOf(c, 0), ir.Ref(m), func(i, j *ir.Var) {
			b.At(at(9)).Store(c, ir.Conv(ir.F32, ir.Op(ir.Add, ir.Ref(i), ir.Ref(j))), ir.Ref(i), ir.Ref(j))
		})
		b.At(at(10)).Store(c, ir.F32c(0), ir.I64c(0), ir.I64c(0))
		b.At(at(11)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) { b.At(at(11)).Store(a, ir.F32c(3), ir.Ref(i)) })
	})
	p := mustLower(t, b.Kernel())
	if got := shape(p); got != "P1:3 P1:4 S3:8 P3:9 S3:10 P3:11" {
		t.Errorf("shape %q", got)
	}
	if p.Groups != 3 {
		t.Errorf("Groups = %d, want 3 (the empty group keeps its id)", p.Groups)
	}
	if len(p.Temps) != 1 || p.Temps[0].Name != "m" {
		t.Errorf("temps %v, want [m]", names(p.Temps))
	}
}

// TestGroupTasksCarryGroup is the contract for any future helper task:
// every task made from a group's statements has the group's id, and groups'
// tasks are contiguous and in id order (checkInvariants checks the latter).
func TestGroupTasksCarryGroup(t *testing.T) {
	b := ir.NewBuilder("g")
	a := b.Array("a", ir.I32, 1)
	var loops [3][]ir.Stmt
	for g := range 3 {
		b.At(at(10*g + 1)).Group(func() {
			for l := range 3 {
				if l == 1 {
					b.At(at(10*g+2+l)).Store(a, ir.I32c(int32(g)), ir.I64c(0))
					loops[g] = append(loops[g], nil)
					continue
				}
				pf := b.At(at(10*g+2+l)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) {
					b.Do(ir.AtomicE(ir.AtomicAdd, a, ir.I32c(1), ir.Ref(i)))
				})
				loops[g] = append(loops[g], pf)
			}
		})
	}
	p := mustLower(t, b.Kernel())
	group := map[ir.Stmt]int{}
	for g, list := range loops {
		for _, s := range list {
			if s != nil {
				group[s] = g + 1
			}
		}
	}
	for _, task := range p.Tasks {
		if task.Kind == Parallel && group[task.Loop] != task.Group {
			t.Errorf("task %d: loop of group %d has group %d", task.Index, group[task.Loop], task.Group)
		}
	}
	if got := shape(p); got != "P1:2 S1:3 P1:4 P2:12 S2:13 P2:14 P3:22 S3:23 P3:24" {
		t.Errorf("shape %q", got)
	}
}

func TestNDRange(t *testing.T) {
	b := ir.NewBuilder("nd")
	c := b.Array("c", ir.F64, 3)
	pf := b.At(at(2)).ParallelN([]ir.Expr{ir.LenOf(c, 0), ir.LenOf(c, 1), ir.LenOf(c, 2)}, func(v []*ir.Var) {
		b.Store(c, ir.F64c(1), ir.Ref(v[0]), ir.Ref(v[1]), ir.Ref(v[2]))
	})
	pf.BlockDim = 256
	p := mustLower(t, b.Kernel())
	if len(p.Tasks) != 1 || p.Tasks[0].Loop != pf || p.Tasks[0].Loop.BlockDim != 256 {
		t.Errorf("plan %s", shape(p))
	}
}

func TestEmpty(t *testing.T) {
	p := mustLower(t, ir.NewBuilder("empty").Kernel())
	if len(p.Tasks) != 0 || p.Groups != 0 {
		t.Errorf("plan %s, groups %d", shape(p), p.Groups)
	}
}

// TestSerialOnly: a kernel of serial statements is one serial task, and a
// local declared in a serial for loop's Init is not a temp candidate.
func TestSerialOnly(t *testing.T) {
	b := ir.NewBuilder("serial")
	a := b.Array("a", ir.I32, 1)
	b.At(at(2)).ForRange("i", ir.LenOf(a, 0), func(i *ir.Var) { b.Store(a, ir.I32c(0), ir.Ref(i)) })
	b.At(at(3)).If(ir.BoolC(true), func() { b.Store(a, ir.I32c(1), ir.I64c(0)) }, nil)
	p := mustLower(t, b.Kernel())
	if got := shape(p); got != "S0:2" || len(p.Temps) != 0 {
		t.Errorf("shape %q temps %v", got, names(p.Temps))
	}
}

type errCase struct {
	name  string
	build func(b *ir.Builder)
	want  []string // substrings of the message
	line  int      // position of the first error
}

func TestErrors(t *testing.T) {
	loop := func(b *ir.Builder, a *ir.Param, line int) {
		b.At(at(line)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) { b.Store(a, ir.I32c(1), ir.Ref(i)) })
	}
	cases := []errCase{
		{"parallel in if", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(2)).If(ir.BoolC(true), func() { loop(b, a, 3) }, nil)
		}, []string{"parallel loop inside an if statement", "put the condition inside the loop body"}, 3},
		{"parallel in else", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(2)).If(ir.BoolC(true), func() {}, func() { loop(b, a, 4) })
		}, []string{"inside an if statement"}, 4},
		{"parallel in serial for", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(2)).ForRange("t", ir.I32c(3), func(*ir.Var) { loop(b, a, 3) })
		}, []string{"inside a serial for loop", "qd.NDRange"}, 3},
		{"parallel in parallel", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(2)).Parallel(ir.LenOf(a, 0), func(*ir.Var) { loop(b, a, 3) })
		}, []string{"parallel loop inside a parallel loop", "qd.NDRange"}, 3},
		{"parallel in if in group", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(1)).Group(func() {
				b.At(at(2)).If(ir.BoolC(true), func() { loop(b, a, 3) }, nil)
			})
		}, []string{"inside an if statement"}, 3},
		{"mixed: loop after group", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(2)).Group(func() { loop(b, a, 3) })
			loop(b, a, 5)
		}, []string{"all of its top-level statements must be qd.StreamParallel blocks", "parallel loop", "separate kernel"}, 5},
		{"mixed: decl before group", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(1)).Decl("n", ir.I32c(1))
			b.At(at(2)).Group(func() { loop(b, a, 3) })
			b.At(at(4)).Store(a, ir.I32c(0), ir.I64c(0))
		}, []string{"all of its top-level statements", "variable declaration"}, 1},
		{"nested group", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(1)).Group(func() {
				b.At(at(2)).Group(func() { loop(b, a, 3) })
			})
		}, []string{"cannot be nested"}, 2},
		{"group nested under if in group", func(b *ir.Builder) {
			b.At(at(1)).Group(func() {
				b.At(at(2)).If(ir.BoolC(true), func() { b.At(at(3)).Group(func() {}) }, nil)
			})
		}, []string{"cannot be nested"}, 3},
		{"group in if", func(b *ir.Builder) {
			b.At(at(2)).If(ir.BoolC(true), func() { b.At(at(3)).Group(func() {}) }, nil)
		}, []string{"qd.StreamParallel block inside an if statement", "must be a top-level statement of the kernel"}, 3},
		{"group in for", func(b *ir.Builder) {
			b.At(at(2)).ForRange("t", ir.I32c(2), func(*ir.Var) { b.At(at(3)).Group(func() {}) })
		}, []string{"inside a serial for loop", "must be a top-level statement"}, 3},
		{"group in parallel loop", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(2)).Parallel(ir.LenOf(a, 0), func(*ir.Var) { b.At(at(3)).Group(func() {}) })
		}, []string{"inside a parallel loop", "must be a top-level statement"}, 3},
		{"parallel assigns temp", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			s := b.At(at(2)).Decl("s", ir.I32c(0))
			b.At(at(3)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) {
				b.At(at(4)).Assign(s, ir.Ld(a, ir.Ref(i)))
			})
		}, []string{`assigns kernel-level variable "s" (declared at k.go:2:2)`, "race", "array element"}, 4},
		{"parallel assigns temp in group", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(1)).Group(func() {
				s := b.At(at(2)).Decl("s", ir.I32c(0))
				b.At(at(3)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) {
					b.At(at(4)).If(ir.BoolC(true), func() { b.At(at(5)).Assign(s, ir.I32c(1)) }, nil)
				})
			})
		}, []string{`assigns kernel-level variable "s"`}, 5},
		{"verify error first", func(b *ir.Builder) {
			a := b.Array("a", ir.I32, 1)
			b.At(at(2)).Store(a, ir.F32c(1), ir.I64c(0))
		}, []string{"cannot store a f32 value"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := ir.NewBuilder("bad")
			c.build(b)
			_, err := Lower(b.Kernel())
			if err == nil {
				t.Fatalf("no error for\n%s", ir.Print(b.Kernel()))
			}
			var e *ir.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *ir.Error: %v", err, err)
			}
			if e.Pos.Line != c.line || e.Kernel != "bad" {
				t.Errorf("first error at line %d of kernel %q, want line %d: %v", e.Pos.Line, e.Kernel, c.line, err)
			}
			for _, w := range c.want {
				if !strings.Contains(e.Error(), w) {
					t.Errorf("error %q lacks %q", e.Error(), w)
				}
			}
		})
	}
}

// TestReadTempOK: parallel tasks may read temps in their extents and body.
func TestReadTempOK(t *testing.T) {
	b := ir.NewBuilder("read")
	a := b.Array("a", ir.I32, 1)
	n := b.Decl("n", ir.Op(ir.Sub, ir.LenOf(a, 0), ir.I64c(1)))
	v := b.Decl("v", ir.I32c(7))
	b.Parallel(ir.Ref(n), func(i *ir.Var) {
		w := b.Decl("w", ir.Ref(v))
		b.Assign(w, ir.Op(ir.Add, ir.Ref(w), ir.I32c(1))) // a loop-local may be assigned
		b.Store(a, ir.Ref(w), ir.Ref(i))
	})
	p := mustLower(t, b.Kernel())
	if len(p.Temps) != 2 || p.Temps[0] != n || p.Temps[1] != v {
		t.Errorf("temps %v, want [n v]", names(p.Temps))
	}
}

// TestAllErrorsJoined: several placement errors come back together, in
// source order.
func TestAllErrorsJoined(t *testing.T) {
	b := ir.NewBuilder("many")
	a := b.Array("a", ir.I32, 1)
	for line := 1; line <= 3; line++ {
		b.At(at(line)).If(ir.BoolC(true), func() {
			b.At(at(line)).Parallel(ir.LenOf(a, 0), func(i *ir.Var) { b.Store(a, ir.I32c(1), ir.Ref(i)) })
		}, nil)
	}
	_, err := Lower(b.Kernel())
	var j interface{ Unwrap() []error }
	if !errors.As(err, &j) || len(j.Unwrap()) != 3 {
		t.Fatalf("want 3 joined errors, got %v", err)
	}
	for i, e := range j.Unwrap() {
		if e.(*ir.Error).Pos.Line != i+1 {
			t.Errorf("error %d at %v", i, e.(*ir.Error).Pos)
		}
	}
}

// TestMixedReportedOnce: stray top-level statements next to groups give one
// error, at the first of them.
func TestMixedReportedOnce(t *testing.T) {
	b := ir.NewBuilder("mixed")
	a := b.Array("a", ir.I32, 1)
	b.At(at(1)).Store(a, ir.I32c(0), ir.I64c(0))
	b.At(at(2)).Group(func() {})
	b.At(at(3)).Store(a, ir.I32c(0), ir.I64c(0))
	_, err := Lower(b.Kernel())
	var e *ir.Error
	if !errors.As(err, &e) || e.Pos.Line != 1 {
		t.Fatalf("got %v", err)
	}
	var j interface{ Unwrap() []error }
	if errors.As(err, &j) {
		t.Errorf("want one error, got %v", err)
	}
}
