package lower

import (
	"math"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

func TestReductions(t *testing.T) {
	type want struct {
		scope  ReductionScope
		nested bool
	}
	cases := []struct {
		name  string
		build func(b *ir.Builder)
		want  []want // nil: no reduction
	}{
		{"sum", func(b *ir.Builder) {
			x, s := b.Array("x", ir.F32, 1), b.Array("s", ir.F32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, s, ir.Ld(x, ir.Ref(i)), ir.I64c(0)))
			})
		}, []want{{Whole, false}}},
		{"two sums and a max under an if", func(b *ir.Builder) {
			x, s := b.Array("x", ir.I64, 1), b.Array("s", ir.I64, 1)
			n := b.Scalar("n", ir.I64)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				v := b.Decl("v", ir.Ld(x, ir.Ref(i)))
				b.Do(ir.AtomicE(ir.AtomicAdd, s, ir.Ref(v), ir.I64c(0)))
				b.Do(ir.AtomicE(ir.AtomicAdd, s, ir.I64c(1), ir.Op(ir.Sub, ir.P(n), ir.I64c(1))))
				b.If(ir.Op(ir.Gt, ir.Ref(v), ir.I64c(0)), func() {
					b.Do(ir.AtomicE(ir.AtomicMax, s, ir.Ref(v), ir.I64c(2)))
				}, nil)
			})
		}, []want{{Whole, false}, {Whole, false}, {Whole, true}}},
		{"sums of two leaves of a record", func(b *ir.Builder) {
			x, s := b.Array("x", ir.F32, 1), b.Array("s", ir.Invalid, 1)
			s.Rec = &ir.Record{Name: "P", Size: 16, Align: 8, Leaves: []ir.Leaf{{Path: ".N", Type: ir.I32, Offset: 0}, {Path: ".V", Type: ir.F64, Offset: 8}}}
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Do(&ir.Atomic{Op: ir.AtomicAdd, Array: s, Index: []ir.Expr{ir.I64c(0)}, Leaf: 0, Value: ir.I32c(1)})
				b.Do(&ir.Atomic{Op: ir.AtomicMax, Array: s, Index: []ir.Expr{ir.I64c(0)}, Leaf: 1, Value: ir.Conv(ir.F64, ir.Ld(x, ir.Ref(i)))})
			})
		}, []want{{Whole, false}, {Whole, false}}},
		{"row sums", func(b *ir.Builder) {
			m, r := b.Array("m", ir.F64, 2), b.Array("r", ir.F64, 1)
			b.Parallel2(ir.LenOf(m, 0), ir.LenOf(m, 1), func(i, j *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, r, ir.Ld(m, ir.Ref(i), ir.Ref(j)), ir.Ref(i)))
			})
		}, []want{{Innermost, false}}},
		{"column sums: the address varies along the innermost dimension", func(b *ir.Builder) {
			m, c := b.Array("m", ir.F64, 2), b.Array("c", ir.F64, 1)
			b.Parallel2(ir.LenOf(m, 0), ir.LenOf(m, 1), func(i, j *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, c, ir.Ld(m, ir.Ref(i), ir.Ref(j)), ir.Ref(j)))
			})
		}, nil},
		{"histogram: the address is a loaded value", func(b *ir.Builder) {
			x, h := b.Array("x", ir.I32, 1), b.Array("h", ir.I32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, h, ir.I32c(1), ir.Ld(x, ir.Ref(i))))
			})
		}, nil},
		{"the address is a body local", func(b *ir.Builder) {
			x, h := b.Array("x", ir.I32, 1), b.Array("h", ir.I32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				k := b.Decl("k", ir.I64c(0))
				b.Do(ir.AtomicE(ir.AtomicAdd, h, ir.I32c(1), ir.Ref(k)))
			})
		}, nil},
		{"the old value is used", func(b *ir.Builder) {
			x, s := b.Array("x", ir.I32, 1), b.Array("s", ir.I32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Store(x, ir.AtomicE(ir.AtomicAdd, s, ir.I32c(1), ir.I64c(0)), ir.Ref(i))
			})
		}, nil},
		{"the reduced array is also read", func(b *ir.Builder) {
			x, s := b.Array("x", ir.I32, 1), b.Array("s", ir.I32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, s, ir.Ld(s, ir.I64c(1)), ir.I64c(0)))
			})
		}, nil},
		{"exchange is not a reduction", func(b *ir.Builder) {
			x, s := b.Array("x", ir.I32, 1), b.Array("s", ir.I32, 1)
			b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicExchange, s, ir.I32c(1), ir.I64c(0)))
			})
		}, nil},
		{"serial tasks have none", func(b *ir.Builder) {
			s := b.Array("s", ir.I32, 1)
			b.ForRange("i", ir.I32c(3), func(*ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, s, ir.I32c(1), ir.I64c(0)))
			})
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := ir.NewBuilder("k")
			c.build(b)
			p, err := Lower(b.Kernel())
			if err != nil {
				t.Fatal(err)
			}
			var got []*Reduction
			for _, task := range p.Tasks {
				got = append(got, task.Reductions...)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d reductions, want %d", len(got), len(c.want))
			}
			for i, w := range c.want {
				if got[i].Scope != w.scope || got[i].Nested != w.nested || got[i].Stmt.X != got[i].Atomic {
					t.Errorf("reduction %d: scope %v nested %v, want %v %v", i, got[i].Scope, got[i].Nested, w.scope, w.nested)
				}
			}
		})
	}
}

// Combining the identity changes nothing, bit for bit.
func TestIdentity(t *testing.T) {
	f32 := func(b uint64) float32 { return math.Float32frombits(uint32(b)) }
	f64 := math.Float64frombits
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), 1.5, -3, float32(math.Inf(-1))} {
		if got := x + f32(Identity(ir.AtomicAdd, ir.F32)); math.Float32bits(got) != math.Float32bits(x) {
			t.Errorf("%v + identity = %v", x, got)
		}
		if got := min(x, f32(Identity(ir.AtomicMin, ir.F32))); got != x {
			t.Errorf("min(%v, identity) = %v", x, got)
		}
		if got := max(x, f32(Identity(ir.AtomicMax, ir.F32))); got != x {
			t.Errorf("max(%v, identity) = %v", x, got)
		}
	}
	if got := math.Copysign(0, -1) + f64(Identity(ir.AtomicAdd, ir.F64)); !math.Signbit(got) {
		t.Error("-0 + identity lost the sign")
	}
	if int32(Identity(ir.AtomicMax, ir.I32)) != math.MinInt32 || int64(Identity(ir.AtomicMax, ir.I32)) != math.MinInt32 {
		t.Error("int32 max identity is not MinInt32 sign-extended")
	}
	if Identity(ir.AtomicMin, ir.U32) != math.MaxUint32 || Identity(ir.AtomicMin, ir.U64) != math.MaxUint64 {
		t.Error("unsigned min identity")
	}
	if int64(Identity(ir.AtomicMin, ir.I64)) != math.MaxInt64 || int64(Identity(ir.AtomicMax, ir.I64)) != math.MinInt64 {
		t.Error("int64 identities")
	}
}
