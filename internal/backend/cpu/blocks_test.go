package cpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// launchBlocks runs kernel k once through the backend on arrays (nil for
// a scalar) and scalars, returning the launch's error.
func launchBlocks(t *testing.T, k *ir.Kernel, ctx context.Context, scalars []uint64, arrays ...[]int32) error {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatal(err)
	}
	d := New()
	m, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := d.NewStream(0)
	a := &backend.Args{Scalars: scalars, Arrays: make([]backend.ArrayArg, len(arrays)), Ctx: ctx}
	for i, x := range arrays {
		if x == nil {
			continue
		}
		b, err := d.WrapHost(unsafe.Pointer(unsafe.SliceData(x)), 4*len(x))
		if err != nil {
			t.Fatal(err)
		}
		a.Arrays[i] = backend.ArrayArg{Buf: b, Shape: [4]int{len(x), 1, 1, 1}}
	}
	l, err := m.Begin(s, a)
	if err != nil {
		return err // a launch's arguments refused (a block size out of range)
	}
	for task := range plan.Tasks {
		if err := l.Run(task, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.End(s); err != nil {
		t.Fatal(err)
	}
	return s.Synchronize()
}

// TestBlocksSpread: a block task's blocks are dealt to several workers
// (a block weighs its threads, so 64 blocks of 128 threads are worth
// splitting, 2 blocks are not), each worker's shared memory zeroed for
// each of its blocks; the launch sizes its blocks from a scalar.
func TestBlocksSpread(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, nb := range []int{2, 64, 1000} {
		x := make([]int32, 100_000)
		want := make([]int32, 16)
		for i := range x {
			x[i] = int32(i * 131 % 16)
			want[x[i]]++
		}
		hist := make([]int32, 16)
		if err := launchBlocks(t, suitekernels.BlockHistogram(), nil, []uint64{0, 0, uint64(nb)}, x, hist, nil); err != nil {
			t.Fatalf("%d blocks: %v", nb, err)
		}
		for v := range want {
			if hist[v] != want[v] {
				t.Fatalf("%d blocks: hist[%d] = %d, want %d", nb, v, hist[v], want[v])
			}
		}
	}
	const bs, blocks = 300, 50
	x := make([]int32, bs*blocks)
	sums := make([]int32, blocks)
	for i := range x {
		x[i] = int32(i%7) - 3
	}
	out := func() []int32 { return make([]int32, len(x)) }
	err := launchBlocks(t, suitekernels.BlockCollectives(ir.I32), nil, []uint64{0, 0, 0, 0, 0, 0, bs}, x, sums, make([]int32, blocks), make([]int32, blocks), out(), out(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for b := range blocks {
		var want int32
		for _, v := range x[b*bs : b*bs+bs] {
			want += v
		}
		if sums[b] != want {
			t.Fatalf("sums[%d] = %d, want %d", b, sums[b], want)
		}
	}
}

// TestBlocksLaunchErrors: a block size outside 1..1024 fails the launch
// with an error naming qd.Blocks and the size; a launch whose context is
// done stops, its error wrapping the context's.
func TestBlocksLaunchErrors(t *testing.T) {
	x, sums := []int32{1, 2, 3}, []int32{0}
	for _, bs := range []uint64{0, 1025} {
		err := launchBlocks(t, suitekernels.BlockCollectives(ir.I32), nil, []uint64{0, 0, 0, 0, 0, 0, bs}, x, sums, sums, sums, x, x, nil)
		if want := fmt.Sprintf("qd.Blocks block size %d is outside 1..1024", bs); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("size %d: error %v, want one naming qd.Blocks and the size", bs, err)
		}
	}
	// Many blocks and no loop in them: the launch stops between blocks.
	b := ir.NewBuilder("blockCount")
	n := b.Array("n", ir.I32, 1)
	b.Blocks(ir.I64c(1<<40), ir.I64c(64), func(*ir.Var) {
		b.Threads(func(*ir.Var) { b.Do(ir.AtomicE(ir.AtomicAdd, n, ir.I32c(1), ir.I64c(0))) })
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counts := make([]int32, 1)
	done := make(chan error, 1)
	go func() { done <- launchBlocks(t, b.Kernel(), ctx, []uint64{0}, counts) }()
	waitFor(t, "the blocks to start", func() bool { return atomic.LoadInt32(&counts[0]) > 0 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("canceled launch: error %v, want one wrapping context.Canceled", err)
	}
}
