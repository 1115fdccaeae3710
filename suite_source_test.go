package qd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Twin kernels: some behaviour tests run each kernel twice, built with the
// IR builder (internal/suitekernels, through buildKernel: the runtime
// without the front end) and written in Go (suiteSrc, through Compile: as
// users write kernels, and as the reference system's own tests are
// written). The test's body is written once, over forEachTwin.

// A twin is one kernel of the suite, made either way.
type twin struct {
	build func() *ir.Kernel // its IR, from internal/suitekernels
	name  string            // its function in suiteSrc
}

var (
	fillTwin          = twin{func() *ir.Kernel { return suitekernels.Fill(ir.F32) }, "fill"}
	addTwin           = twin{suitekernels.Add, "add"}
	twoGroupsTwin     = twin{suitekernels.TwoGroups, "twoGroups"}
	loopsInGroupsTwin = twin{suitekernels.LoopsInGroups, "groups"}
	rendezvousTwin    = twin{suitekernels.Rendezvous, "rendezvous"}
)

// meetGroups are the group counts of the meetG kernels of suiteSrc.
var meetGroups = []int{2, 4, 8}

// meetTwin is the rendezvous of g stream-parallel groups.
func meetTwin(g int) twin {
	return twin{func() *ir.Kernel { return suitekernels.RendezvousGroups(g) }, fmt.Sprintf("meet%d", g)}
}

// forEachTwin runs f as the subtests "ir" and "source", each once per arch
// with a fresh Program (forEachArch), with kernel making a twin that
// subtest's way.
func forEachTwin(t *testing.T, f func(t *testing.T, p *Program, kernel func(twin) *Kernel)) {
	t.Helper()
	ways := []struct {
		name string
		make func(t *testing.T, p *Program, k twin) *Kernel
	}{
		{"ir", func(t *testing.T, p *Program, k twin) *Kernel { return build(t, p, k.build()) }},
		{"source", func(t *testing.T, p *Program, k twin) *Kernel { return suiteKernel(t, p, k.name) }},
	}
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			forEachArch(t, func(t *testing.T, p *Program) {
				f(t, p, func(k twin) *Kernel { return way.make(t, p, k) })
			})
		})
	}
}

// suiteSrc holds the Go twins of the suite's kernels, the meetG kernels
// generated (meetSource).
var suiteSrc = suiteSrcHead + meetSource(meetGroups...)

const suiteSrcHead = `package kernels

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
`

// meetSource writes meetG for each g: a rendezvous of g stream-parallel
// groups, each of which raises its flag and sees all g flags only if all
// g groups run at once (suitekernels.RendezvousGroups). A block cannot sit
// in a loop, so the g blocks are written out.
func meetSource(gs ...int) string {
	var b strings.Builder
	for _, g := range gs {
		fmt.Fprintf(&b, "\n//qd:kernel\nfunc meet%d(flags, seen []int32, iters int64) {\n", g)
		for i := range g {
			fmt.Fprintf(&b, "\tqd.StreamParallel(func() {\n\t\tfor range 1 {\n\t\t\tqd.AtomicAdd(&flags[%d], 1)\n\t\t\tseen[%[1]d] = raised(flags, iters)\n\t\t}\n\t})\n", i)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// suiteKernel compiles suiteSrc on p (the source cache makes repeats cheap)
// and returns the named kernel; the module closes with the test.
func suiteKernel(t *testing.T, p *Program, name string) *Kernel {
	t.Helper()
	m := compileModule(t, p, suiteSrc, WithFilename("suite_kernels.go"))
	t.Cleanup(func() { m.Close() })
	return kernelOf(t, m, name)
}
