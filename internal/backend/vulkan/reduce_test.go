package vulkan

import (
	"math"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// TestCombinedReductions sums 2^25 float32 ones and takes the min and max
// of int32 values through atomics of a parallel loop: combined per
// invocation and subgroup (reduce.go), the sum is exact, where one atomic
// per element stops at 2^24.
func TestCombinedReductions(t *testing.T) {
	d := openTestDevice(t)
	b := ir.NewBuilder("reductions")
	x := b.Array("x", ir.F32, 1)
	v := b.Array("v", ir.I32, 1)
	sum := b.Array("sum", ir.F32, 1)
	mm := b.Array("mm", ir.I32, 1)
	zero := ir.I64c(0)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, sum, ir.Ld(x, ir.Ref(i)), zero))
		b.Do(ir.AtomicE(ir.AtomicMin, mm, ir.Ld(v, ir.Ref(i)), zero))
		b.Do(ir.AtomicE(ir.AtomicMax, mm, ir.Ld(v, ir.Ref(i)), ir.I64c(1)))
	})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Tasks[0].Reductions) != 3 {
		t.Fatalf("%d reductions found, want 3", len(plan.Tasks[0].Reductions))
	}
	mod, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	s := newStream(t, d)
	const n = 1 << 25
	bx, bv := alloc(t, d, 4*n), alloc(t, d, 4*n)
	if err := bx.Fill(s, math.Float32bits(1), 4, n); err != nil {
		t.Fatal(err)
	}
	vals := make([]int32, n)
	for i := range vals {
		vals[i] = int32((i*7919)%1000003) - 500000
	}
	vals[12345], vals[n-3] = math.MinInt32+5, math.MaxInt32-9
	if err := bv.CopyFromHost(s, unsafe.Pointer(&vals[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	bs, bm := alloc(t, d, 4), alloc(t, d, 8)
	write(t, s, bs, make([]byte, 4))
	init := []int32{math.MaxInt32, math.MinInt32}
	if err := bm.CopyFromHost(s, unsafe.Pointer(&init[0]), 8); err != nil {
		t.Fatal(err)
	}
	shape := func(k int) [4]int { return [4]int{k, 1, 1, 1} }
	args := &backend.Args{Scalars: make([]uint64, 4), Arrays: []backend.ArrayArg{
		{Buf: bx, Shape: shape(n)}, {Buf: bv, Shape: shape(n)}, {Buf: bs, Shape: shape(1)}, {Buf: bm, Shape: shape(2)}}}
	l, err := mod.Begin(s, args)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Run(0, s); err != nil {
		t.Fatal(err)
	}
	l.End(s)
	gs, gm := read(t, s, bs, 4), read(t, s, bm, 8)
	if got := *(*float32)(unsafe.Pointer(&gs[0])); got != n {
		t.Errorf("sum of %d ones = %v", n, got)
	}
	got := *(*[2]int32)(unsafe.Pointer(&gm[0]))
	if got[0] != math.MinInt32+5 || got[1] != math.MaxInt32-9 {
		t.Errorf("min, max = %v, want %d, %d", got, math.MinInt32+5, math.MaxInt32-9)
	}
}
