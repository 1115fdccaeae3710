package ptx

import (
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/codegen/devmath"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// The tests below build small kernels and check the PTX with regexps, in the
// manner of Go's test/codegen. compileKernel also assembles each with ptxas.

func saxpy() *ir.Kernel {
	b := ir.NewBuilder("saxpy")
	a, x, y := b.Scalar("a", ir.F32), b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

func TestSaxpy(t *testing.T) {
	m := compileKernel(t, saxpy())
	asm(t, m.PTX,
		`(?m)^\.version 6\.0\n\.target sm_70\n\.address_size 64\n`,
		`\.visible \.entry saxpy_t0\(`,
		`\.maxntid 256, 1, 1`,
		`ld\.param\.f32 %f\d+, \[s0\]`,
		`cvta\.to\.global\.u64`,
		`ld\.global\.f32`,
		`(?s)(fma\.rn\.f32|mul\.rn\.f32.*add\.rn\.f32)`,
		`st\.global\.f32`,
		`%nctaid\.x`,                                       // grid-stride
		`add\.u32 %r\d+, %r\d+, %r\d+;\n\tbra\.uni \$L\d+`, // 32-bit step back to the loop head
		`add\.s64 %rd\d+, %rd\d+, %rd\d+;\n\tbra\.uni \$L\d+`,
		`setp\.le\.s64 %p\d+, %rd\d+, 0`, // early exit on an empty range
		`!\.approx`,
		`!\bfma\.`, // never contracted
	)
}

func TestFloatOps(t *testing.T) {
	for _, ft := range []ir.Type{ir.F32, ir.F64} {
		b := ir.NewBuilder("fops_" + ft.String())
		x, y, z := b.Array("x", ft, 1), b.Array("y", ft, 1), b.Array("c", ir.Bool, 1)
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
			xi, yi := ir.Ld(x, ir.Ref(i)), ir.Ld(y, ir.Ref(i))
			b.Store(y, ir.Op(ir.Div, ir.Fn(ir.Sqrt, xi), yi), ir.Ref(i))
			b.Store(z, ir.Op(ir.Ne, xi, yi), ir.Ref(i))
			b.Store(x, ir.Op(ir.Min, xi, yi), ir.Ref(i))
			b.Store(y, ir.Op(ir.Max, xi, yi), ir.Ref(i))
			b.Store(x, ir.Fn(ir.Round, ir.Fn(ir.Floor, ir.Fn(ir.Ceil, ir.Fn(ir.Trunc, ir.Fn(ir.Abs, xi))))), ir.Ref(i))
			b.Store(z, ir.Op(ir.Lt, xi, yi), ir.Ref(i))
		})
		ty := ft.String()
		m := compileKernel(t, b.Kernel())
		asm(t, m.PTX,
			`div\.rn\.`+ty, `sqrt\.rn\.`+ty,
			`setp\.neu\.`+ty, `setp\.lt\.`+ty, `!setp\.ltu`,
			`min\.`+ty, `max\.`+ty, `setp\.nan\.`+ty, // Go min/max: NaN patched in
			`or\.b(32|64)`, `and\.b(32|64)`, // ±0 patched in
			`cvt\.rmi\.`+ty+`\.`+ty, `cvt\.rpi\.`+ty+`\.`+ty, `cvt\.rzi\.`+ty+`\.`+ty, `abs\.`+ty,
			`st\.global\.u8`, `selp\.u32 %r\d+, 1, 0, %p\d+`,
			`!\.approx`,
		)
	}
}

func TestConversions(t *testing.T) {
	types := []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64}
	b := ir.NewBuilder("conv")
	arrays := map[ir.Type]*ir.Param{}
	for _, ty := range types {
		arrays[ty] = b.Array("a_"+ty.String(), ty, 1)
	}
	b.Parallel(ir.LenOf(arrays[ir.I32], 0), func(i *ir.Var) {
		for _, to := range types {
			for _, from := range types {
				b.Store(arrays[to], ir.Conv(to, ir.Ld(arrays[from], ir.Ref(i))), ir.Ref(i))
			}
		}
	})
	m := compileKernel(t, b.Kernel())
	asm(t, m.PTX,
		`cvt\.rzi\.s32\.f32`, `cvt\.rzi\.u64\.f64`, `cvt\.rzi\.s64\.f32`,
		`cvt\.rn\.f32\.s32`, `cvt\.rn\.f64\.u64`, `cvt\.rn\.f32\.u32`,
		`cvt\.rn\.f32\.f64`, `cvt\.f64\.f32`,
		`cvt\.s64\.s32`, `cvt\.u64\.u32`, `cvt\.u32\.u64`,
		`!cvt\.(rn|rz)\.f64\.f32`,
	)
}

func TestIntegerOps(t *testing.T) {
	for _, ty := range []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64} {
		b := ir.NewBuilder("iops_" + ty.String())
		x, y := b.Array("x", ty, 1), b.Array("y", ty, 1)
		sh := b.Scalar("s", ir.U64)
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
			xi, yi := ir.Ld(x, ir.Ref(i)), ir.Ld(y, ir.Ref(i))
			for _, op := range []ir.BinOp{ir.Add, ir.Sub, ir.Mul, ir.Div, ir.Rem, ir.And, ir.Or, ir.Xor, ir.AndNot, ir.Min, ir.Max} {
				b.Store(x, ir.Op(op, xi, yi), ir.Ref(i))
			}
			b.Store(x, ir.Op(ir.Shl, xi, ir.P(sh)), ir.Ref(i))
			b.Store(x, ir.Op(ir.Shr, xi, yi), ir.Ref(i))
			b.Store(x, ir.Un(ir.Neg, xi), ir.Ref(i))
			b.Store(x, ir.Un(ir.BitNot, xi), ir.Ref(i))
		})
		m := compileKernel(t, b.Kernel())
		s := opType(ty)
		want := []string{`div\.` + s, `rem\.` + s, `mul\.lo\.` + s, `min\.` + s, `max\.` + s,
			`min\.u64 %rd\d+, %rd\d+, 64`, // 64-bit shift counts clamp before narrowing
			`not\.b`}
		if ty.IsSigned() {
			want = append(want, `shr\.s`, `setp\.eq\.`+s+` %p\d+, %r\w+, -1`) // MinInt / -1
		} else {
			want = append(want, `shr\.u`, `!setp\.eq\.`+s+` %p\d+, %r\w+, -1`)
		}
		asm(t, m.PTX, want...)
	}
}

func TestAtomics(t *testing.T) {
	ops := []ir.AtomicOp{ir.AtomicAdd, ir.AtomicSub, ir.AtomicMin, ir.AtomicMax, ir.AtomicAnd, ir.AtomicOr, ir.AtomicXor, ir.AtomicExchange, ir.AtomicCAS}
	for _, ty := range []ir.Type{ir.I32, ir.I64, ir.U32, ir.U64, ir.F32, ir.F64} {
		b := ir.NewBuilder("atom_" + ty.String())
		x, out := b.Array("x", ty, 1), b.Array("out", ty, 1)
		b.Parallel(ir.LenOf(out, 0), func(i *ir.Var) {
			v := ir.Ld(out, ir.Ref(i))
			for _, op := range ops {
				if ty.IsFloat() && (op == ir.AtomicAnd || op == ir.AtomicOr || op == ir.AtomicXor) {
					continue
				}
				a := &ir.Atomic{Op: op, Array: x, Index: []ir.Expr{ir.I64c(0)}, Value: v}
				if op == ir.AtomicCAS {
					a.Compare = ir.Zero(ty)
				}
				b.Store(out, a, ir.Ref(i)) // old value used
				if op != ir.AtomicCAS {
					b.Do(ir.AtomicE(op, x, v, ir.I64c(1))) // old value unused
				}
			}
		})
		m := compileKernel(t, b.Kernel())
		bt := bitType(ty)
		add := opType(ty)
		if ty == ir.I64 {
			add = "u64"
		}
		want := []string{`atom\.global\.add\.` + add, `red\.global\.add\.` + add,
			`atom\.global\.exch\.` + bt, `atom\.global\.cas\.` + bt}
		if ty.IsFloat() {
			want = append(want, `neg\.`+opType(ty), `setp\.eq\.`+bt, `!atom\.global\.(min|max)`)
		} else {
			want = append(want, `atom\.global\.min\.`+opType(ty), `red\.global\.max\.`+opType(ty),
				`atom\.global\.and\.`+bt, `red\.global\.xor\.`+bt, `neg\.s`)
		}
		asm(t, m.PTX, want...)
	}
}

func TestAtomicOnBoolFails(t *testing.T) {
	b := ir.NewBuilder("atombool")
	x := b.Array("x", ir.Bool, 1)
	pf := b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicExchange, x, ir.BoolC(true), ir.Ref(i)))
	})
	plan := &lower.Plan{Kernel: b.Kernel(), Tasks: []*lower.Task{{Kind: lower.Parallel, Loop: pf}}}
	// The verifier refuses this kernel too; the code generator must not
	// rely on that.
	if _, err := compilePlan(plan, testTarget); err == nil || !strings.Contains(err.Error(), "atomic") {
		t.Fatalf("got %v, want an error about atomics on bool", err)
	}
}

func TestTranscendentals(t *testing.T) {
	for _, ty := range []ir.Type{ir.F32, ir.F64} {
		b := ir.NewBuilder("trans_" + ty.String())
		x := b.Array("x", ty, 1)
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
			xi := ir.Ld(x, ir.Ref(i))
			for _, fn := range ir.Intrinsics() {
				args := []ir.Expr{xi}
				if fn.Arity() == 2 {
					args = append(args, xi)
				}
				b.Store(x, ir.Fn(fn, args...), ir.Ref(i))
				b.Store(x, ir.Fn(fn, args...), ir.Ref(i)) // second use: one definition
			}
		})
		m := compileKernel(t, b.Kernel())
		s := ty.String()
		asm(t, m.PTX,
			`\.func \(\.reg \.`+s+` %ret\) __qd_exp_`+s+`\(`,
			`call \(%f\w+\), __qd_sin_`+s+`, \(%f\w+\);`,
			`call \(%f\w+\), __qd_atan2_`+s+`, \(%f\w+, %f\w+\);`,
			`(?s)\.func.*\.entry`, // definitions before the entries
		)
		if n := strings.Count(m.PTX, ".func (.reg ."+s+" %ret) __qd_exp_"+s); n != 1 {
			t.Errorf("exp defined %d times", n)
		}
	}
}

func TestMathUnavailable(t *testing.T) {
	approx := Options{mathFunc: func(fn ir.Intrinsic, t ir.Type) (string, string, error) {
		return "", ".func (.reg .f32 %ret) bad(.reg .f32 %a) { ex2.approx.f32 %ret, %a; ret; }", nil
	}}
	b := ir.NewBuilder("approx")
	x := b.Array("x", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.Fn(ir.Exp, ir.Ld(x, ir.Ref(i))), ir.Ref(i)) })
	if err := compileErr(t, b.Kernel(), approx); err == nil || !strings.Contains(err.Error(), ".approx") {
		t.Fatalf("got %v, want a refusal of .approx", err)
	}
}

func TestControlFlow(t *testing.T) {
	b := ir.NewBuilder("control")
	x := b.Array("x", ir.I32, 1)
	n := b.Scalar("n", ir.I32)
	flag := b.Scalar("flag", ir.Bool)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		acc := b.Decl("acc", ir.I32c(0))
		var outer *ir.For
		outer = b.ForRange("j", ir.P(n), func(j *ir.Var) {
			b.If(ir.Op(ir.Eq, ir.Op(ir.Rem, ir.Ref(j), ir.I32c(3)), ir.I32c(0)), func() { b.Continue() }, nil)
			b.While(nil, func() {
				b.Assign(acc, ir.Op(ir.Add, ir.Ref(acc), ir.Ref(j)))
				b.If(ir.Op(ir.Gt, ir.Ref(acc), ir.I32c(1000)), func() {
					b.Break() // labelled below: leaves the outer loop
				}, func() { b.Break() })
			})
		})
		labelled := false
		ir.Inspect(outer.Body, func(n ir.Node) bool {
			if s, ok := n.(*ir.If); ok && !labelled && len(s.Else) > 0 {
				s.Then[0].(*ir.Break).Loop = outer
				labelled = true
			}
			return true
		})
		// && and || must not evaluate the right side (an atomic) needlessly.
		c := ir.Op(ir.LAnd, ir.P(flag), ir.Op(ir.Gt, ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(0)), ir.I32c(0)))
		d := ir.Op(ir.LOr, c, ir.Op(ir.Lt, ir.Ref(acc), ir.I32c(5)))
		b.Store(x, ir.Sel(d, ir.Ref(acc), ir.Un(ir.Neg, ir.Ref(acc))), ir.Ref(i))
	})
	m := compileKernel(t, b.Kernel())
	asm(t, m.PTX,
		`@!%p\d+ bra \$L\d+;\n(\t[^\n]*\n)*?\tatom\.global\.add`, // && branches around the atomic
		`selp\.b32`,
		`ld\.param\.u32 %r\d+, \[s2\];\n\tsetp\.ne\.u32 %p\d+, %r\d+, 0`, // bool param: 4 bytes
	)
}

func TestMultiDim(t *testing.T) {
	b := ir.NewBuilder("md")
	a := b.Array("a", ir.F64, 3)
	c := b.Array("c", ir.F64, 2)
	b.ParallelN([]ir.Expr{ir.LenOf(a, 0), ir.LenOf(a, 1), ir.LenOf(a, 2)}, func(v []*ir.Var) {
		b.Store(a, ir.Op(ir.Add, ir.Ld(a, ir.Ref(v[0]), ir.Ref(v[1]), ir.Ref(v[2])), ir.Ld(c, ir.Ref(v[1]), ir.Ref(v[2]))),
			ir.Ref(v[0]), ir.Ref(v[1]), ir.Ref(v[2]))
	})
	b.Parallel2(ir.Conv(ir.I32, ir.LenOf(c, 0)), ir.I32c(7), func(i, j *ir.Var) {
		b.Store(c, ir.Conv(ir.F64, ir.Op(ir.Mul, ir.Ref(i), ir.Ref(j))), ir.Ref(i), ir.Ref(j))
	})
	m := compileKernel(t, b.Kernel())
	asm(t, m.PTX,
		`div\.u32`, `div\.u64`, // 32- and 64-bit unflattening
		`mad\.lo\.s64`,
		`\.param \.s64 a0_d1`, `\.param \.s64 a0_d2`,
	)
	tk := m.Tasks[0]
	if got := len(tk.Slots); got != 6 {
		t.Errorf("task 0 has %d params, want 6: %+v", got, tk.Slots)
	}
}

func TestSerialAndTemps(t *testing.T) {
	b := ir.NewBuilder("temps")
	x := b.Array("x", ir.F32, 1)
	s := b.Scalar("s", ir.I64)
	n := b.Decl("n", ir.Op(ir.Mul, ir.P(s), ir.I64c(2)))
	scale := b.Decl("scale", ir.F32c(0.5))
	ok := b.Decl("ok", ir.BoolC(true))
	b.ForRange("k", ir.I32c(3), func(k *ir.Var) {
		b.Assign(scale, ir.Op(ir.Mul, ir.Ref(scale), ir.F32c(2)))
	})
	b.Parallel(ir.Ref(n), func(i *ir.Var) {
		b.If(ir.Ref(ok), func() {
			b.Store(x, ir.Op(ir.Mul, ir.Ld(x, ir.Ref(i)), ir.Ref(scale)), ir.Ref(i))
		}, nil)
	})
	m := compileKernel(t, b.Kernel())
	if m.NumTemps != 3 || len(m.Tasks) != 2 {
		t.Fatalf("NumTemps %d, tasks %d; want 3, 2", m.NumTemps, len(m.Tasks))
	}
	asm(t, m.PTX,
		`\.maxntid 1, 1, 1`,
		`st\.global\.s64 \[%rd\d+\+0\]`, `st\.global\.f32 \[%rd\d+\+8\]`, `st\.global\.u8 \[%rd\d+\+16\]`,
		`ld\.global\.s64 %rd\d+, \[%rd\d+\+0\]`, `ld\.global\.f32 %f\d+, \[%rd\d+\+8\]`, `ld\.global\.u8 %r\d+, \[%rd\d+\+16\]`,
		`\.param \.u64 temps`,
		`0f3F000000`, // 0.5 as bits
	)
	if m.Tasks[0].Kind.String() != "serial" || m.Tasks[0].BlockDim != 1 || m.Tasks[0].HostTotal != nil {
		t.Errorf("serial task info %+v", m.Tasks[0])
	}
	if m.Tasks[1].HostTotal != nil {
		t.Errorf("a loop over a temporary has a HostTotal")
	}
}

func TestStreamGroups(t *testing.T) {
	b := ir.NewBuilder("groups")
	a, c := b.Array("a", ir.I32, 1), b.Array("c", ir.U64, 1)
	b.Group(func() {
		b.Parallel(ir.LenOf(a, 0), func(i *ir.Var) { b.Store(a, ir.I32c(1), ir.Ref(i)) })
	})
	b.Group(func() {
		b.Store(c, ir.U64c(1<<63), ir.I64c(0))
		p := b.Parallel(ir.LenOf(c, 0), func(i *ir.Var) { b.Store(c, ir.U64c(2), ir.Ref(i)) })
		p.BlockDim = 64
	})
	m := compileKernel(t, b.Kernel())
	var groups []int
	for _, tk := range m.Tasks {
		groups = append(groups, tk.Group)
	}
	if len(groups) != 3 || groups[0] != 1 || groups[1] != 2 || groups[2] != 2 {
		t.Errorf("groups %v, want [1 2 2]", groups)
	}
	if m.Tasks[2].BlockDim != 64 {
		t.Errorf("BlockDim %d, want 64", m.Tasks[2].BlockDim)
	}
	asm(t, m.PTX, `\.entry groups_t2\([^)]*\)\n\.maxntid 64, 1, 1`, `0x8000000000000000`)
}

// TestDevmath compiles every transcendental with package devmath's real
// subroutines (the other tests use stubMath) and assembles the result.
func TestDevmath(t *testing.T) {
	for _, ty := range []ir.Type{ir.F32, ir.F64} {
		b := ir.NewBuilder("devmath_" + ty.String())
		x := b.Array("x", ty, 1)
		var fns []ir.Intrinsic
		for _, fn := range ir.Intrinsics() {
			if _, _, err := devmath.Func(fn, ty); err != nil {
				continue // inline intrinsics, and any not written yet
			}
			fns = append(fns, fn)
		}
		if len(fns) == 0 {
			t.Skipf("devmath provides no %v functions yet", ty)
		}
		b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
			xi := ir.Ld(x, ir.Ref(i))
			for _, fn := range fns {
				args := []ir.Expr{xi}
				if fn.Arity() == 2 {
					args = append(args, xi)
				}
				b.Store(x, ir.Fn(fn, args...), ir.Ref(i))
			}
		})
		m := compileKernelWith(t, b.Kernel(), Options{mathFunc: devmath.Func})
		t.Logf("%v: %d devmath functions, %d bytes of PTX", ty, len(fns), len(m.PTX))
	}
}
