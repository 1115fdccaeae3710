package cuda

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// These GPU tests go through package ptx: plan → PTX → JIT → launch.

func lowerKernel(t *testing.T, k *ir.Kernel) *lower.Plan {
	t.Helper()
	p, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower.Lower(%s): %v", k.Name, err)
	}
	return p
}

func saxpyPlan(t *testing.T) *lower.Plan {
	b := ir.NewBuilder("saxpy")
	a, x, y := b.Scalar("a", ir.F32), b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Ld(x, ir.Ref(i))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return lowerKernel(t, b.Kernel())
}

// runAll runs every task of a launch on s, in order.
func runAll(t *testing.T, m backend.Module, s backend.Stream, args *backend.Args, tasks int) {
	t.Helper()
	l, err := m.Begin(s, args)
	if err != nil {
		t.Fatalf("Begin: %v", err)
	}
	for i := range tasks {
		if err = l.Run(i, s); err != nil {
			break
		}
	}
	if endErr := l.End(s); err == nil {
		err = endErr
	}
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
}

func f32Buffer(t *testing.T, d *device, s backend.Stream, v []float32) backend.Buffer {
	b := mustAlloc(t, d, 4*len(v))
	if err := b.CopyFromHost(s, unsafe.Pointer(&v[0]), 4*len(v)); err != nil {
		t.Fatal(err)
	}
	return b
}

func readF32(t *testing.T, b backend.Buffer, s backend.Stream, n int) []float32 {
	out := make([]float32, n)
	if err := b.CopyToHost(s, unsafe.Pointer(&out[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGPUPTXSaxpy(t *testing.T) {
	d := openGPU(t)
	s := mustStream(t, d, 0)
	plan := saxpyPlan(t)
	start := time.Now()
	m, err := d.Compile(plan)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	first := time.Since(start)
	defer m.Close()

	for _, n := range []int{1, 1000, 1 << 22} {
		xs, ys := make([]float32, n), make([]float32, n)
		for i := range xs {
			xs[i], ys[i] = float32(i), float32(2*i+1)
		}
		x, y := f32Buffer(t, d, s, xs), f32Buffer(t, d, s, ys)
		a := float32(3)
		args := &backend.Args{
			Scalars: []uint64{uint64(math.Float32bits(a)), 0, 0},
			Arrays:  []backend.ArrayArg{{}, arr(x, n), arr(y, n)},
		}
		runAll(t, m, s, args, len(plan.Tasks))
		got := readF32(t, y, s, n)
		for i, v := range got {
			if want := a*xs[i] + ys[i]; v != want {
				t.Fatalf("n=%d: y[%d] = %v, want %v", n, i, v, want)
			}
		}
	}

	// The same plan again: the cached module, no JIT.
	start = time.Now()
	m2, err := d.Compile(saxpyPlan(t))
	if err != nil {
		t.Fatal(err)
	}
	again := time.Since(start)
	defer m2.Close()
	if m2.(*moduleHandle).m != m.(*moduleHandle).m {
		t.Error("a second Compile of the same plan loaded a new module")
	}
	t.Logf("first Compile %v, cached %v", first, again)
}

// A top-level local used by a later task lives in the launch's
// temporaries: y[i] = t with t := a*2 computed by a serial task.
func TestGPUPTXTemps(t *testing.T) {
	d := openGPU(t)
	s := mustStream(t, d, 0)
	b := ir.NewBuilder("scale2")
	a, y := b.Scalar("a", ir.F32), b.Array("y", ir.F32, 1)
	tv := b.Decl("t", ir.Op(ir.Mul, ir.P(a), ir.F32c(2)))
	b.Parallel(ir.LenOf(y, 0), func(i *ir.Var) { b.Store(y, ir.Ref(tv), ir.Ref(i)) })
	plan := lowerKernel(t, b.Kernel())
	if len(plan.Temps) == 0 {
		t.Logf("lowering kept t out of the temporaries; the test still checks the result")
	}
	m, err := d.Compile(plan)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	defer m.Close()
	const n = 5000
	yb := mustAlloc(t, d, 4*n)
	for _, av := range []float32{1.5, -4} {
		args := &backend.Args{Scalars: []uint64{uint64(math.Float32bits(av)), 0}, Arrays: []backend.ArrayArg{{}, arr(yb, n)}}
		runAll(t, m, s, args, len(plan.Tasks))
		for i, v := range readF32(t, yb, s, n) {
			if v != 2*av {
				t.Fatalf("a=%v: y[%d] = %v", av, i, v)
			}
		}
	}
}

// A kernel with two stream-parallel groups, each task run on its own
// stream with fork/join events as package qd does it.
func TestGPUPTXGroups(t *testing.T) {
	d := openGPU(t)
	s := mustStream(t, d, 0)
	b := ir.NewBuilder("twoJobs")
	p, q := b.Array("p", ir.I32, 1), b.Array("q", ir.I32, 1)
	b.Group(func() { b.Parallel(ir.LenOf(p, 0), func(i *ir.Var) { b.Store(p, ir.I32c(1), ir.Ref(i)) }) })
	b.Group(func() { b.Parallel(ir.LenOf(q, 0), func(i *ir.Var) { b.Store(q, ir.I32c(2), ir.Ref(i)) }) })
	plan := lowerKernel(t, b.Kernel())
	m, err := d.Compile(plan)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	defer m.Close()
	const n = 1 << 16
	pb, qb := mustAlloc(t, d, 4*n), mustAlloc(t, d, 4*n)
	args := &backend.Args{Scalars: make([]uint64, 2), Arrays: []backend.ArrayArg{arr(pb, n), arr(qb, n)}}

	fork, _ := d.NewEvent(false)
	defer fork.Close()
	l, err := m.Begin(s, args)
	if err != nil {
		t.Fatal(err)
	}
	fork.Record(s)
	var joins []backend.Event
	for i, task := range plan.Tasks {
		gs := mustStream(t, d, 0)
		gs.WaitEvent(fork)
		if err := l.Run(i, gs); err != nil {
			t.Fatalf("task %d (group %d): %v", i, task.Group, err)
		}
		j, _ := d.NewEvent(false)
		defer j.Close()
		j.Record(gs)
		joins = append(joins, j)
	}
	for _, j := range joins {
		s.WaitEvent(j)
	}
	if err := l.End(s); err != nil {
		t.Fatal(err)
	}
	gp, gq := readU32(t, pb, s, n), readU32(t, qb, s, n)
	for i := range n {
		if gp[i] != 1 || gq[i] != 2 {
			t.Fatalf("element %d: p=%d q=%d", i, gp[i], gq[i])
		}
	}
}
