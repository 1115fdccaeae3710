package cpu

import (
	"slices"
	"sort"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// uniformNames runs the analysis on the parallel body of k (2-D, row mode)
// and returns the names of the uniform locals, sorted.
func uniformNames(t *testing.T, k *ir.Kernel) []string {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatal(err)
	}
	task := plan.Tasks[0]
	var names []string
	for _, v := range uniformVars(newCompiler(plan, task, modeRow), task.Loop.Body) {
		names = append(names, v.Name)
	}
	sort.Strings(names)
	return names
}

func TestUniformVars(t *testing.T) {
	tests := []struct {
		name string
		body func(b *ir.Builder, x *ir.Param, i, j *ir.Var)
		want []string
	}{
		{"loop counter with a uniform bound", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			acc := b.Decl("acc", ir.F32c(0))
			b.ForRange("k", ir.I64c(8), func(k *ir.Var) { b.Assign(acc, ir.Op(ir.Add, ir.Ref(acc), ir.Ld(x, ir.Ref(i), ir.Ref(j)))) })
		}, []string{"k"}},
		{"outer index, length, load by uniform index", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			b.Decl("u", ir.Op(ir.Add, ir.Ld(x, ir.Ref(i), ir.I64c(0)), ir.Conv(ir.F32, ir.LenOf(x, 1))))
			b.Decl("v", ir.Ld(x, ir.Ref(i), ir.Ref(j)))
		}, []string{"u"}},
		{"assigned under a varying if", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			u := b.Decl("u", ir.I64c(0))
			w := b.Decl("w", ir.I64c(0))
			b.If(ir.Op(ir.Gt, ir.Ref(j), ir.I64c(3)), func() { b.Assign(u, ir.I64c(1)) }, nil)
			b.If(ir.Op(ir.Gt, ir.Ref(i), ir.I64c(3)), func() { b.Assign(w, ir.I64c(1)) }, nil)
		}, []string{"w"}},
		{"depends on a varying local", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			u := b.Decl("u", ir.I64c(0))
			w := b.Decl("w", ir.I64c(0))
			b.Assign(w, ir.Ref(u))
			b.If(ir.Op(ir.Gt, ir.Ref(j), ir.I64c(3)), func() { b.Assign(u, ir.I64c(1)) }, nil)
		}, nil},
		{"loop with a varying condition", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			n := b.Decl("n", ir.I64c(0))
			b.While(ir.Op(ir.Lt, ir.Ref(n), ir.Ref(j)), func() { b.Assign(n, ir.Op(ir.Add, ir.Ref(n), ir.I64c(1))) })
		}, nil},
		{"uniform loop, varying break", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			b.ForRange("k", ir.I64c(8), func(k *ir.Var) {
				b.If(ir.Op(ir.Eq, ir.Ref(k), ir.Ref(j)), func() { b.Break() }, nil)
			})
		}, nil},
		{"uniform loop, uniform break", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			b.ForRange("k", ir.I64c(8), func(k *ir.Var) {
				b.If(ir.Op(ir.Eq, ir.Ref(k), ir.Ref(i)), func() { b.Break() }, nil)
			})
		}, []string{"k"}},
		{"inner loop's own varying break", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			b.ForRange("k", ir.I64c(8), func(k *ir.Var) {
				b.While(nil, func() {
					b.If(ir.Op(ir.Gt, ir.Ref(j), ir.I64c(2)), func() { b.Break() }, nil)
					b.Break()
				})
			})
		}, []string{"k"}},
		{"varying select and atomics", func(b *ir.Builder, x *ir.Param, i, j *ir.Var) {
			b.Decl("s", ir.Sel(ir.Op(ir.Gt, ir.Ref(j), ir.I64c(2)), ir.I64c(1), ir.I64c(2)))
			b.Decl("a", ir.AtomicE(ir.AtomicAdd, x, ir.F32c(1), ir.Ref(i), ir.I64c(0)))
			b.Decl("c", ir.Fn(ir.Sqrt, ir.F32c(2)))
		}, []string{"c"}},
	}
	for _, tt := range tests {
		b := ir.NewBuilder("u")
		x := b.Array("x", ir.F32, 2)
		b.Parallel2(ir.LenOf(x, 0), ir.LenOf(x, 1), func(i, j *ir.Var) { tt.body(b, x, i, j) })
		if got := uniformNames(t, b.Kernel()); !slices.Equal(got, tt.want) {
			t.Errorf("%s: uniform %v, want %v\n%s", tt.name, got, tt.want, printKernel(b.Kernel()))
		}
	}
}

// TestUniformOuterBreak: a varying break out of an outer loop, from
// inside an inner loop, makes both loops' locals varying.
func TestUniformOuterBreak(t *testing.T) {
	b := ir.NewBuilder("u")
	x := b.Array("x", ir.F32, 1)
	var outer *ir.For
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		outer = b.ForRange("k", ir.I64c(4), func(k *ir.Var) {
			b.ForRange("l", ir.I64c(4), func(l *ir.Var) {
				b.If(ir.Op(ir.Eq, ir.Ref(l), ir.Ref(i)), func() {}, nil)
			})
		})
	})
	// Put break-to-outer into the inner if's then branch.
	inner := outer.Body[0].(*ir.For)
	inner.Body[0].(*ir.If).Then = []ir.Stmt{&ir.Break{Loop: outer}}
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	if got := uniformVars(newCompiler(plan, plan.Tasks[0], modeRow), plan.Tasks[0].Loop.Body); len(got) != 0 {
		t.Errorf("uniform %v, want none", got)
	}
}

// TestUniformLoops runs kernels whose loop counters are uniform (a
// polynomial by Horner's rule, nested loops, an early uniform exit) and
// checks them against plain Go, in row and flat batches.
func TestUniformLoops(t *testing.T) {
	b := ir.NewBuilder("poly")
	x, y := b.Array("x", ir.F32, 2), b.Array("y", ir.F32, 2)
	b.Parallel2(ir.LenOf(x, 0), ir.LenOf(x, 1), func(i, j *ir.Var) {
		xi := b.Decl("xi", ir.Ld(x, ir.Ref(i), ir.Ref(j)))
		acc := b.Decl("acc", ir.F32c(0))
		b.ForRange("k", ir.I64c(5), func(k *ir.Var) {
			b.ForRange("l", ir.Op(ir.Add, ir.Ref(k), ir.Ref(i)), func(l *ir.Var) {
				b.If(ir.Op(ir.Gt, ir.Ref(l), ir.I64c(6)), func() { b.Break() }, nil)
				b.Assign(acc, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(acc), ir.Ref(xi)), ir.F32c(0.5)))
			})
		})
		b.Store(y, ir.Ref(acc), ir.Ref(i), ir.Ref(j))
	})
	if got := uniformNames(t, b.Kernel()); !slices.Equal(got, []string{"k", "l"}) {
		t.Fatalf("uniform %v, want [k l]", got)
	}
	p := compileKernel(t, b.Kernel())
	for _, shape := range [][2]int{{3, 700}, {40, 5}} {
		n, m := shape[0], shape[1]
		xs, got := make([]float32, n*m), make([]float32, n*m)
		for k := range xs {
			xs[k] = float32(k%13) / 8
		}
		for _, ch := range chunkings {
			if err := launch(p, &Args{Arrays: []Array{arr(xs, n, m), arr(got, n, m)}}, ch.chunk, ch.workers); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				for j := range m {
					acc := float32(0)
					for k := range 5 {
						for l := range k + i {
							if l > 6 {
								break
							}
							acc = acc*xs[i*m+j] + 0.5
						}
					}
					if got[i*m+j] != acc {
						t.Fatalf("%v chunk %d: y[%d][%d] = %v, want %v", shape, ch.chunk, i, j, got[i*m+j], acc)
					}
				}
			}
		}
	}
}
