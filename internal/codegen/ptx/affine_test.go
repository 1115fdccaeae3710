package ptx

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// stencilKernel: out[i+1][j+1] = in[i][j+1] + in[i+2][j+1] + in[i+1][j] +
// in[i+1][j+2] over the interior, with the indices through locals.
func stencilKernel() *ir.Kernel {
	b := ir.NewBuilder("stencil")
	in, out := b.Array("in", ir.F32, 2), b.Array("out", ir.F32, 2)
	two := ir.I64c(2)
	b.ParallelN([]ir.Expr{ir.Op(ir.Sub, ir.LenOf(out, 0), two), ir.Op(ir.Sub, ir.LenOf(out, 1), two)}, func(v []*ir.Var) {
		i := b.Decl("i", ir.Op(ir.Add, ir.Ref(v[0]), ir.I64c(1)))
		j := b.Decl("j", ir.Op(ir.Add, ir.Ref(v[1]), ir.I64c(1)))
		sum := ir.Op(ir.Add, ir.Ld(in, ir.Ref(v[0]), ir.Ref(j)), ir.Ld(in, ir.Op(ir.Add, ir.Ref(i), ir.I64c(1)), ir.Ref(j)))
		sum = ir.Op(ir.Add, sum, ir.Ld(in, ir.Ref(i), ir.Ref(v[1])))
		sum = ir.Op(ir.Add, sum, ir.Ld(in, ir.Ref(i), ir.Op(ir.Add, ir.Ref(j), ir.I64c(1))))
		b.Store(out, sum, ir.Ref(i), ir.Ref(j))
	})
	return b.Kernel()
}

// In a 2-D loop each array gets one element base per trip, and each
// access is that base plus an immediate (same row) or an offset register
// computed before the loop; with Debug every access keeps its own checked
// address.
func TestAffineAddresses(t *testing.T) {
	m := compileKernel(t, stencilKernel())
	// The body is written three times: for a whole row chunk with its
	// loads first (TestRowChunkLoadsFirst), for one row of a chunk cut
	// short, and in the flat loop.
	if n := count(m.PTX, `ld\.global\.f32`); n != hoistedStencilLoads+8 {
		t.Fatalf("%d loads, want %d (%d for a whole chunk, 4 per other body):\n%s", n, hoistedStencilLoads+8, hoistedStencilLoads, numbered(m.PTX))
	}
	// in[v0][j] is the base plus one element, an immediate; the others
	// reach other rows: the base plus a register computed before the loop.
	asm(t, m.PTX, `ld\.global\.f32 %f\d+, \[%rd\d+\+4\];`)
	// Between each one-row body's first load and its store: no row
	// arithmetic.
	rest := m.PTX[len(chunkPart(t, m.PTX)):]
	for body := 0; body < 2; body++ {
		ld := regexp.MustCompile(`ld\.global\.f32`).FindStringIndex(rest)
		st := regexp.MustCompile(`st\.global\.f32`).FindStringIndex(rest)
		if ld == nil || st == nil || st[0] < ld[0] {
			t.Fatalf("body %d: no load before a store:\n%s", body, numbered(m.PTX))
		}
		if n := count(rest[ld[0]:st[0]], `mad\.lo\.s64`); n != 0 {
			t.Errorf("body %d: %d mad.lo.s64 among the loads, want 0:\n%s", body, n, numbered(m.PTX))
		}
		rest = rest[st[1]:]
	}
	text, _, err := Generate(mustLower(t, stencilKernel()), testTarget, stubbed(Options{Debug: true}))
	if err != nil {
		t.Fatal(err)
	}
	asm(t, text, `!\[%rd\d+\+4\]`)
}

// hoistedStencilLoads is the number of distinct elements a whole chunk of
// stencilKernel reads: chunkRows+2 rows of column j, chunkRows rows of
// columns j-1 and j+1.
const hoistedStencilLoads = (chunkRows + 2) + 2*chunkRows

// chunkPart is the PTX of the whole-chunk body: from the first load to the
// last of its chunkRows stores.
func chunkPart(t *testing.T, ptx string) string {
	t.Helper()
	first := regexp.MustCompile(`ld\.global\.f32`).FindStringIndex(ptx)
	if first == nil {
		t.Fatalf("no load:\n%s", numbered(ptx))
	}
	stores := regexp.MustCompile(`st\.global\.f32[^\n]*\n`).FindAllStringIndex(ptx[first[0]:], chunkRows)
	if len(stores) < chunkRows {
		t.Fatalf("fewer than %d stores:\n%s", chunkRows, numbered(ptx))
	}
	return ptx[:first[0]+stores[chunkRows-1][1]]
}

// A whole row chunk issues the loads of all its trips, each distinct
// element once, before its first store; then the trips' stores, with no
// load between them.
func TestRowChunkLoadsFirst(t *testing.T) {
	m := compileKernel(t, stencilKernel())
	if got := m.Tasks[0].PointsPerThread; got != chunkRows {
		t.Errorf("PointsPerThread %d, want %d: the grid sized for one block per unit", got, chunkRows)
	}
	part := chunkPart(t, m.PTX)
	firstStore := regexp.MustCompile(`st\.global\.f32`).FindStringIndex(part)
	if n := count(part[:firstStore[0]], `ld\.global\.f32`); n != hoistedStencilLoads {
		t.Errorf("%d loads before the chunk's first store, want %d:\n%s", n, hoistedStencilLoads, numbered(m.PTX))
	}
	if n := count(part[firstStore[0]:], `ld\.global`); n != 0 {
		t.Errorf("%d loads among the chunk's stores, want 0:\n%s", n, numbered(m.PTX))
	}
	if n := count(part, `st\.global\.f32`); n != chunkRows {
		t.Errorf("%d stores in the chunk, want %d", n, chunkRows)
	}
}

// What a whole chunk may not load early: a load that follows a store of
// its trip (it must see the store), and any load of a body with a branch
// or an atomic (it might not run). Such loads stay in their trip.
func TestRowChunkLoadsKeptInPlace(t *testing.T) {
	// out[i][j] = in[i][j] + 1; out2[i][j] = out[i][j] + in[i][j+1]
	b := ir.NewBuilder("storeThenLoad")
	in, out, out2 := b.Array("in", ir.F32, 2), b.Array("out", ir.F32, 2), b.Array("out2", ir.F32, 2)
	b.ParallelN([]ir.Expr{ir.LenOf(out, 0), ir.Op(ir.Sub, ir.LenOf(out, 1), ir.I64c(1))}, func(v []*ir.Var) {
		i, j := ir.Ref(v[0]), ir.Ref(v[1])
		b.Store(out, ir.Op(ir.Add, ir.Ld(in, i, j), ir.F32c(1)), i, j)
		b.Store(out2, ir.Op(ir.Add, ir.Ld(out, i, j), ir.Ld(in, i, ir.Op(ir.Add, j, ir.I64c(1)))), i, j)
	})
	m := compileKernel(t, b.Kernel())
	part := chunkPart(t, m.PTX)
	firstStore := regexp.MustCompile(`st\.global\.f32`).FindStringIndex(part)
	if n := count(part[:firstStore[0]], `ld\.global\.f32`); n != chunkRows {
		t.Errorf("%d loads before the chunk's first store, want %d (in[i][j] of each trip):\n%s", n, chunkRows, numbered(m.PTX))
	}

	// if in[i][j] > 0 { out[i][j] = in[i][j+1] }: nothing hoisted, so the
	// body appears twice (a row of a chunk, the flat loop), each with its
	// two loads.
	b = ir.NewBuilder("branchy")
	in, out = b.Array("in", ir.F32, 2), b.Array("out", ir.F32, 2)
	b.ParallelN([]ir.Expr{ir.LenOf(out, 0), ir.Op(ir.Sub, ir.LenOf(out, 1), ir.I64c(1))}, func(v []*ir.Var) {
		i, j := ir.Ref(v[0]), ir.Ref(v[1])
		b.If(ir.Op(ir.Gt, ir.Ld(in, i, j), ir.F32c(0)), func() {
			b.Store(out, ir.Ld(in, i, ir.Op(ir.Add, j, ir.I64c(1))), i, j)
		}, nil)
	})
	m = compileKernel(t, b.Kernel())
	if n := count(m.PTX, `ld\.global\.f32`); n != 4 {
		t.Errorf("%d loads, want 4 (nothing loaded early):\n%s", n, numbered(m.PTX))
	}

	// out[i][j] = Σ a_k[i][j]·a_k[i+1][j] over 4 float64 arrays: a whole
	// chunk would hold 4 × 13 elements of 2 words, over the budget, so
	// it runs row by row (8 loads in each of its two bodies).
	b = ir.NewBuilder("wide")
	var as []*ir.Param
	for k := range 4 {
		as = append(as, b.Array(fmt.Sprintf("a%d", k), ir.F64, 2))
	}
	out = b.Array("out", ir.F64, 2)
	b.ParallelN([]ir.Expr{ir.Op(ir.Sub, ir.LenOf(out, 0), ir.I64c(1)), ir.LenOf(out, 1)}, func(v []*ir.Var) {
		i, j := ir.Ref(v[0]), ir.Ref(v[1])
		var sum ir.Expr = ir.F64c(0)
		for _, a := range as {
			sum = ir.Op(ir.Add, sum, ir.Op(ir.Mul, ir.Ld(a, i, j), ir.Ld(a, ir.Op(ir.Add, i, ir.I64c(1)), j)))
		}
		b.Store(out, sum, i, j)
	})
	m = compileKernel(t, b.Kernel())
	if n := count(m.PTX, `ld\.global\.f64`); n != 16 {
		t.Errorf("%d loads, want 16 (nothing loaded early):\n%s", n, numbered(m.PTX))
	}
}

// On sm_80 and later with PTX ISA 7.4, a whole chunk's early loads ask L2
// for 256-byte blocks (Target.l2Prefetch); the loads of other bodies and
// of older targets do not.
func TestRowChunkLoadsPrefetch(t *testing.T) {
	for _, c := range []struct {
		target Target
		hint   bool
	}{
		{Target{SM: 90, Version: "7.8"}, true},
		{Target{SM: 80, Version: "7.4"}, true},
		{Target{SM: 80, Version: "7.0"}, false},
		{Target{SM: 75, Version: "6.3"}, false},
	} {
		m, err := compilePlanWith(mustLower(t, stencilKernel()), c.target, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if c.hint {
			want = hoistedStencilLoads
		}
		if n := count(m.PTX, `ld\.global\.L2::256B\.f32`); n != want {
			t.Errorf("sm_%d, ISA %s: %d loads with .L2::256B, want %d:\n%s", c.target.SM, c.target.Version, n, want, numbered(m.PTX))
		}
		if n := count(m.PTX, `ld\.global\.(L2::256B\.)?f32`); n != hoistedStencilLoads+8 {
			t.Errorf("sm_%d: %d loads in all, want %d", c.target.SM, n, hoistedStencilLoads+8)
		}
	}
}
