package qd

import (
	"testing"
)

// Go-source versions of behaviour-suite tests that read best as kernels
// written in Go, as the reference system's own tests are written. The
// IR-built versions in suite_streams_test.go and suite_parallel_test.go stay:
// they test the runtime without the front end.

const suiteSrc = `package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func fill(x []float32, v float32) {
	for i := range len(x) {
		x[i] = v
	}
}

//qd:kernel
func add(a, b, c []float32) {
	for i := range len(c) {
		c[i] = a[i] + b[i]
	}
}

// twoGroups: each block runs on its own stream.
//
//qd:kernel
func twoGroups(a, b []float32, v float32) {
	qd.StreamParallel(func() {
		for i := range len(a) {
			a[i] = v
		}
	})
	qd.StreamParallel(func() {
		for i := range len(b) {
			b[i] = 2 * v
		}
	})
}

// groups: the two loops of the first block run in order on its stream.
//
//qd:kernel
func groups(a, b []float32) {
	qd.StreamParallel(func() {
		for i := range len(a) {
			a[i] = 1
		}
		for i := range len(a) {
			a[i] += 1
		}
	})
	qd.StreamParallel(func() {
		for i := range len(b) {
			b[i] = 10
		}
	})
}

// rendezvous is one side of a meeting: raise flags[me], then spin until
// flags[other] is raised (at most iters steps) and record whether it was.
//
//qd:kernel
func rendezvous(flags, seen []int32, me, other int, iters int64) {
	for range 1 {
		qd.AtomicAdd(&flags[me], 1)
		seen[me] = 0
		for range iters {
			if qd.AtomicAdd(&flags[other], 0) != 0 {
				seen[me] = 1
				break
			}
		}
	}
}

// raised counts the raised flags, spinning until all are (at most iters
// steps).
func raised(flags []int32, iters int64) int32 {
	n := int32(0)
	for range iters {
		n = 0
		for o := range len(flags) {
			if qd.AtomicAdd(&flags[o], 0) != 0 {
				n++
			}
		}
		if int(n) == len(flags) {
			break
		}
	}
	return n
}

// meet4 is a rendezvous of four stream-parallel groups: each sees all four
// flags only if all four groups run at once.
//
//qd:kernel
func meet4(flags, seen []int32, iters int64) {
	qd.StreamParallel(func() {
		for range 1 {
			qd.AtomicAdd(&flags[0], 1)
			seen[0] = raised(flags, iters)
		}
	})
	qd.StreamParallel(func() {
		for range 1 {
			qd.AtomicAdd(&flags[1], 1)
			seen[1] = raised(flags, iters)
		}
	})
	qd.StreamParallel(func() {
		for range 1 {
			qd.AtomicAdd(&flags[2], 1)
			seen[2] = raised(flags, iters)
		}
	})
	qd.StreamParallel(func() {
		for range 1 {
			qd.AtomicAdd(&flags[3], 1)
			seen[3] = raised(flags, iters)
		}
	})
}
`

// suiteKernel compiles suiteSrc on p (the source cache makes repeats cheap)
// and returns the named kernel; the module closes with the test.
func suiteKernel(t *testing.T, p *Program, name string) *Kernel {
	t.Helper()
	m := compileModule(t, p, suiteSrc, WithFilename("suite_kernels.go"))
	t.Cleanup(func() { m.Close() })
	return kernelOf(t, m, name)
}

func TestSourceKernelOnStream(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		fill := suiteKernel(t, p, "fill")
		x := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		check(t, fill.LaunchOn(s, x, float32(42)))
		check(t, s.Synchronize())
		allEqual(t, "x", toSlice(t, x), 42)
		check(t, s.Close())
	})
}

func TestSourceTwoStreams(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		fill := suiteKernel(t, p, "fill")
		a := newNdarray[float32](t, p, arrayLen)
		b := newNdarray[float32](t, p, arrayLen)
		s1 := newStream(t, p)
		s2 := newStream(t, p)
		check(t, fill.LaunchOn(s1, a, float32(1)))
		check(t, fill.LaunchOn(s2, b, float32(2)))
		check(t, s1.Synchronize())
		check(t, s2.Synchronize())
		allEqual(t, "a", toSlice(t, a), 1)
		allEqual(t, "b", toSlice(t, b), 2)
	})
}

// TestSourceTwoStreamsOverlap: the rendezvous of TestTwoStreamsOverlap,
// written in Go.
func TestSourceTwoStreamsOverlap(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := suiteKernel(t, p, "rendezvous")
		flags := newNdarray[int32](t, p, 2)
		seen := newNdarray[int32](t, p, 2)
		s1 := newStream(t, p)
		s2 := newStream(t, p)
		iters := spinBound(p)
		check(t, k.LaunchOn(s1, flags, seen, 0, 1, iters))
		check(t, k.LaunchOn(s2, flags, seen, 1, 0, iters))
		check(t, p.Synchronize())
		allEqual(t, "seen", toSlice(t, seen), 1)
	})
}

func TestSourceStreamParallelBasic(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := suiteKernel(t, p, "twoGroups")
		a := newNdarray[float32](t, p, arrayLen)
		b := newNdarray[float32](t, p, arrayLen)
		check(t, k.Launch(a, b, float32(1)))
		check(t, p.Synchronize())
		allEqual(t, "a", toSlice(t, a), 1)
		allEqual(t, "b", toSlice(t, b), 2)
	})
}

// TestSourceStreamParallelSeveralLoopsPerGroup: loops of one group run in
// order on its stream; a later kernel on the launch stream sees every
// group's writes.
func TestSourceStreamParallelSeveralLoopsPerGroup(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := suiteKernel(t, p, "groups")
		add := suiteKernel(t, p, "add")
		a := newNdarray[float32](t, p, arrayLen)
		b := newNdarray[float32](t, p, arrayLen)
		c := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		for _, on := range []*Stream{p.DefaultStream(), s} {
			check(t, k.LaunchOn(on, a, b))
			check(t, add.LaunchOn(on, a, b, c))
			check(t, on.Synchronize())
			allEqual(t, "a", toSlice(t, a), 2)
			allEqual(t, "b", toSlice(t, b), 10)
			allEqual(t, "c", toSlice(t, c), 12)
		}
	})
}

// TestSourceStreamParallelGroupsOverlap: four groups of one kernel meet.
func TestSourceStreamParallelGroupsOverlap(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := suiteKernel(t, p, "meet4")
		flags := newNdarray[int32](t, p, 4)
		seen := newNdarray[int32](t, p, 4)
		check(t, k.Launch(flags, seen, spinBound(p)))
		check(t, p.Synchronize())
		allEqual(t, "seen", toSlice(t, seen), 4)
	})
}

func TestSourceStreamPoolReuse(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := suiteKernel(t, p, "twoGroups")
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
