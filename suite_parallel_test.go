package qd

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

func TestStreamParallelBasic(t *testing.T) {
	forEachTwin(t, func(t *testing.T, p *Program, kernel func(twin) *Kernel) {
		k := kernel(twoGroupsTwin)
		a := newNdarray[float32](t, p, arrayLen)
		b := newNdarray[float32](t, p, arrayLen)
		check(t, k.Launch(a, b, float32(1)))
		check(t, p.Synchronize())
		allEqual(t, "a", toSlice(t, a), 1)
		allEqual(t, "b", toSlice(t, b), 2)
	})
}

// TestStreamParallelSeveralLoopsPerGroup: loops of one group run in order
// on its stream; a later kernel on the launch stream sees every group's
// writes.
func TestStreamParallelSeveralLoopsPerGroup(t *testing.T) {
	forEachTwin(t, func(t *testing.T, p *Program, kernel func(twin) *Kernel) {
		k := kernel(loopsInGroupsTwin)
		add := kernel(addTwin)
		a := newNdarray[float32](t, p, arrayLen)
		bb := newNdarray[float32](t, p, arrayLen)
		c := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		for _, on := range []*Stream{p.DefaultStream(), s} {
			check(t, k.LaunchOn(on, a, bb))
			check(t, add.LaunchOn(on, a, bb, c))
			check(t, on.Synchronize())
			allEqual(t, "a", toSlice(t, a), 2)
			allEqual(t, "b", toSlice(t, bb), 10)
			allEqual(t, "c", toSlice(t, c), 12)
		}
	})
}

// TestStreamParallelAfterEarlierWork: a grouped kernel launched with
// LaunchOn(s) after slow work on s must see that work (the fork event).
func TestStreamParallelAfterEarlierWork(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needLongLoops)
		slow := build(t, p, suitekernels.SlowWrite())
		k := build(t, p, suitekernels.CopyGroups())
		state := newNdarray[int64](t, p, 1)
		s := newStream(t, p)
		for r := range 3 {
			x := newNdarray[float32](t, p, 64)
			y1 := newNdarray[float32](t, p, 64)
			y2 := newNdarray[float32](t, p, 64)
			check(t, slow.LaunchOn(s, x, float32(r+5), state, int64(200000)))
			check(t, k.LaunchOn(s, x, y1, y2))
			check(t, s.Synchronize())
			allEqual(t, "d1", toSlice(t, y1), float32(r+5))
			allEqual(t, "d2", toSlice(t, y2), float32(r+5))
		}
	})
}

func TestStreamPoolReuse(t *testing.T) {
	forEachTwin(t, func(t *testing.T, p *Program, kernel func(twin) *Kernel) {
		k := kernel(twoGroupsTwin)
		a := newNdarray[float32](t, p, 128)
		b := newNdarray[float32](t, p, 128)
		for v := 1; v <= 5; v++ {
			check(t, k.Launch(a, b, float32(v)))
			check(t, p.Synchronize())
			allEqual(t, "a", toSlice(t, a), float32(v))
			allEqual(t, "b", toSlice(t, b), float32(2*v))
		}
		free, out := p.pool.Free(), p.pool.Out()
		// Two groups need one borrowed stream (the first group runs on the
		// launch stream); host transfers may have borrowed more.
		if out != 0 || free < 1 || free > 2 {
			t.Errorf("pool after 5 launches: %d free, %d out; want 1-2 free, 0 out", free, out)
		}
	})
}

// TestStreamParallelGroupsOverlap: G groups of one kernel, each spinning
// until all G have raised their flags. Each G closes what it made: left to
// the collector, an array's free (which waits for the whole device) could
// come between the next G's groups and keep them apart (meetAll).
func TestStreamParallelGroupsOverlap(t *testing.T) {
	forEachTwin(t, func(t *testing.T, p *Program, kernel func(twin) *Kernel) {
		for _, G := range meetGroups {
			t.Run(fmt.Sprint(G), func(t *testing.T) {
				// Pooled streams take queues in turn with the Program's
				// other streams, so G of them are on G distinct queues
				// only with room to spare (8 groups on NVIDIA's 8
				// compute queues met 7).
				needsQueues(t, p, 2*G)
				k := kernel(meetTwin(G))
				defer k.Close()
				flags := newNdarray[int32](t, p, G)
				defer flags.Close()
				seen := newNdarray[int32](t, p, G)
				defer seen.Close()
				check(t, k.Launch(flags, seen, spinBound(p)))
				check(t, p.Synchronize())
				allEqual(t, "seen", toSlice(t, seen), int32(G))
			})
		}
	})
}

// TestLaunchFailureReturnsPooledStreams injects a failure into the second
// group's launch: every borrowed stream must be back in the pool, and the
// Program must keep working.
func TestLaunchFailureReturnsPooledStreams(t *testing.T) {
	forEachArchFaulty(t, func(t *testing.T, p *Program, d *faultyDevice) {
		k := build(t, p, suitekernels.ThreeGroups())
		arr := newNdarray[float32](t, p, 3)
		injected := errors.New("injected launch failure")
		fail := func(task int) error {
			if task == 1 {
				return injected
			}
			return nil
		}
		d.failRun.Store(&fail)
		err := k.Launch(arr, nil)
		wantErr(t, err, ErrInvalidArgument) // argument errors come before any task
		err = k.Launch(arr)
		d.failRun.Store(nil)
		wantErr(t, err, injected)
		out := p.pool.Out()
		if out != 0 {
			t.Fatalf("%d pooled streams still out after a failed launch", out)
		}
		check(t, p.Synchronize())
		check(t, k.Launch(arr))
		check(t, p.Synchronize())
		got := toSlice(t, arr)
		if got[0] != 1 || got[1] != 2 || got[2] != 3 {
			t.Fatalf("after recovery x = %v, want [1 2 3]", got)
		}
	})
}

// TestStreamParallelValidation: the placement rules of groups, through
// buildKernel, each with its position and advice.
func TestStreamParallelValidation(t *testing.T) {
	pos := ir.Pos{File: "k.go", Line: 7, Col: 3}
	cases := []struct {
		name  string
		build func(b *ir.Builder, x *ir.Param)
		want  string
	}{
		{"mixed top level", func(b *ir.Builder, x *ir.Param) {
			b.Group(func() { b.Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) }) })
			b.At(pos).Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
		}, "all of its top-level statements"},
		{"nested", func(b *ir.Builder, x *ir.Param) {
			b.Group(func() {
				b.At(pos).Group(func() { b.Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) }) })
			})
		}, "nested"},
		{"under if", func(b *ir.Builder, x *ir.Param) {
			b.If(ir.BoolC(true), func() {
				b.At(pos).Group(func() { b.Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) }) })
			}, nil)
		}, "top-level"},
		{"parallel loop under if", func(b *ir.Builder, x *ir.Param) {
			b.If(ir.BoolC(true), func() {
				b.At(pos).Parallel(ir.I64c(1), func(i *ir.Var) { b.Store(x, ir.F32c(1), ir.Ref(i)) })
			}, nil)
		}, "top level"},
	}
	forEachArch(t, func(t *testing.T, p *Program) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				b := ir.NewBuilder("bad")
				x := b.Array("x", ir.F32, 1)
				c.build(b, x)
				_, err := buildKernel(p, b.Kernel())
				if err == nil {
					t.Fatal("buildKernel accepted an invalid kernel")
				}
				if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "k.go:7:3") {
					t.Fatalf("error %q: want position k.go:7:3 and %q", err, c.want)
				}
			})
		}
	})
}

// TestArgumentErrors: every kind of bad argument gets an *ArgumentError
// naming the kernel and the parameter.
func TestArgumentErrors(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Saxpy())
		xs := newNdarray[float32](t, p, 8)
		ys := newNdarray[float32](t, p, 8)
		i32 := newNdarray[int32](t, p, 8)
		two := newNdarray[float32](t, p, 2, 4)
		closed := newNdarray[float32](t, p, 8)
		check(t, closed.Close())
		var nilArr *Ndarray[float32]
		cases := []struct {
			name  string
			args  []any
			param string
			want  string
			is    error
		}{
			{"too few", []any{float32(1), xs}, "", "got 2 arguments, want 3", nil},
			{"too many", []any{float32(1), xs, ys, ys}, "", "got 4 arguments, want 3", nil},
			{"scalar kind", []any{int32(1), xs, ys}, "a", "want float32, got int32", nil},
			{"scalar nil", []any{nil, xs, ys}, "a", "got nil", nil},
			{"array for scalar", []any{xs, xs, ys}, "a", "want float32", nil},
			{"scalar for array", []any{float32(1), float32(2), ys}, "x", "got float32", nil},
			{"dtype", []any{float32(1), i32, ys}, "x", "got a 1-dim *Ndarray[int32]", nil},
			{"dims", []any{float32(1), two, ys}, "x", "got a 2-dim *Ndarray[float32]", nil},
			{"slice dtype", []any{float32(1), []float64{1}, ys}, "x", "got []float64", nil},
			{"slice dims", []any{float32(1), [][]float32{{1}}, ys}, "x", "got [][]float32", nil},
			{"closed", []any{float32(1), closed, ys}, "x", "closed", ErrClosed},
			{"nil ndarray", []any{float32(1), nilArr, ys}, "x", "nil Ndarray", nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				err := k.Launch(c.args...)
				var ae *ArgumentError
				if !errors.As(err, &ae) {
					t.Fatalf("got %v, want an *ArgumentError", err)
				}
				wantErr(t, err, ErrInvalidArgument)
				if c.is != nil {
					wantErr(t, err, c.is)
				}
				if ae.Kernel != "saxpy" || ae.Param != c.param || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %q (param %q), want kernel saxpy, param %q, and %q", err, ae.Param, c.param, c.want)
				}
			})
		}
	})
}

// TestHostSlices: Go slices as array arguments are copied in and back, in
// 1 to 3 dimensions, and the launch waits for the results.
func TestHostSlices(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Add())
		a := []float32{1, 2, 3, 4}
		b := []float32{10, 20, 30, 40}
		c := make([]float32, 4)
		s := newStream(t, p)
		check(t, k.LaunchOn(s, a, b, c))
		for i := range c {
			if c[i] != a[i]+b[i] {
				t.Fatalf("c = %v", c)
			}
		}
		// Mixed: an Ndarray and slices.
		nb := newNdarray[float32](t, p, 4)
		check(t, nb.CopyFromHost(b))
		clear(c)
		check(t, k.Launch(a, nb, c))
		if c[3] != 44 {
			t.Fatalf("c = %v", c)
		}
		// 2-D and 3-D.
		k2 := build(t, p, suitekernels.Scale2())
		grid := [][]int{make([]int, 3), make([]int, 3)}
		check(t, k2.Launch(grid))
		if grid[1][2] != 12 || grid[0][1] != 1 {
			t.Fatalf("grid = %v", grid)
		}
		wantErr(t, k2.Launch([][]int{make([]int, 3), make([]int, 2)}), ErrInvalidArgument)
		k3 := build(t, p, suitekernels.Fill3())
		cube := make([][][]float64, 2)
		for i := range cube {
			cube[i] = [][]float64{make([]float64, 2), make([]float64, 2)}
		}
		check(t, k3.Launch(cube))
		if cube[1][1][1] != 111 || cube[1][0][1] != 101 {
			t.Fatalf("cube = %v", cube)
		}
		// Empty slices are fine.
		check(t, k.Launch([]float32{}, []float32{}, []float32{}))
	})
}

// TestKernelErrorsReported: an index out of range inside a kernel is an
// error from Synchronize (CPU only: GPUs do not check bounds).
func TestKernelErrorsReported(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	k := build(t, p, suitekernels.OOB())
	arr := newNdarray[float32](t, p, 4)
	check(t, k.Launch(arr))
	err := p.DefaultStream().Synchronize()
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("Synchronize = %v, want an index-out-of-range error", err)
	}
	check(t, p.DefaultStream().Synchronize()) // reported once
	err = k.Launch(make([]float32, 4))
	if err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Fatalf("slice launch = %v, want an index-out-of-range error", err)
	}
}
