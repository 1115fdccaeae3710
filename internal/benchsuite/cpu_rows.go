package benchsuite

import (
	_ "embed"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/quadrants-go/qd"
)

// cpuKernelSource is cpu_kernels.go, compiled by qd.Compile.
//
//go:embed cpu_kernels.go
var cpuKernelSource string

// cpuCase is one construct of the CPU rows: a kernel of cpu_kernels.go (or
// of the block kernels, cpu_blocks.go), its plain-Go reference and the
// arguments of both.
type cpuCase struct {
	name   string // the row's name
	kernel string // the //qd:kernel function, unless the set-up makes cpuRun.launch
	// id names the case's go test benchmark when kernel is empty.
	id string
	// bar is the per-core bar on qd's time over plain Go's: 2 for the
	// constructs held to docs/semantics.md's (within 2× of plain Go), 1
	// for the block kernels (issue 24: at least as fast); 0 for none.
	bar float64
	// serial: the kernel is a serial task, which one core runs whatever
	// the count; it has no parallel-speedup row.
	serial bool
	// size is the element count (n) and, for a 2-D case, the row length (m).
	size func(quick bool) (n, m int)
	// setup makes the arguments on p: what a launch passes, the plain-Go
	// call on host copies of the same inputs, and the outputs to compare;
	// mod is the compiled kernels, for a case that launches several.
	setup func(p *qd.Program, mod *qd.Module, n, m int) (*cpuRun, error)
}

// cpuRun is one case's prepared arguments.
type cpuRun struct {
	args []any // LaunchOn's arguments
	// launch, when set, enqueues one run on a stream in place of the
	// case's kernel with args: a computation of several launches.
	launch func(st *qd.Stream) error
	plain  func() // the plain-Go reference on host copies
	// got and want are the kernel's and the reference's outputs after one
	// run of each from the same inputs; tol is the absolute difference
	// allowed (0: bit for bit).
	got  func() ([]float64, error)
	want func() []float64
	tol  float64
	free []interface{ Close() error }
}

func (r *cpuRun) close() {
	for _, a := range r.free {
		a.Close()
	}
}

// cpuCases are the constructs, in table order.
func cpuCases() []cpuCase {
	sized := func(full, m int) func(bool) (int, int) {
		return func(quick bool) (int, int) {
			if quick {
				return full / 16, m
			}
			return full, m
		}
	}
	square := func(m int) func(bool) (int, int) {
		return func(quick bool) (int, int) {
			if quick {
				m /= 4
			}
			return m * m, m
		}
	}
	return []cpuCase{
		{name: "saxpy", kernel: "saxpy", bar: 2, size: sized(1<<20, 0), setup: setupSaxpy},
		{name: "heat step (the demo's kernel)", kernel: "heat", bar: 2, size: sized(256*256, 256), setup: setupHeat},
		{name: "2-D 5-point stencil", kernel: "stencil5", bar: 2, size: sized(1024*1024, 1024), setup: setupStencil5},
		{name: "reduction (atomic add)", kernel: "sum", size: sized(1<<20, 0), setup: setupSum},
		{name: "branches (if/else per element)", kernel: "branches", size: sized(1<<20, 0), setup: setupUnary(branches)},
		{name: "divergent inner loop (Collatz)", kernel: "collatz", size: sized(1<<16, 0), setup: setupCollatz},
		{name: "uniform inner loop (degree-32 poly)", kernel: "poly", size: sized(1<<18, 0), setup: setupUnary(poly)},
		{name: "math library (sqrt, exp, sin)", kernel: "mathy", size: sized(1<<18, 0), setup: setupUnary(mathy)},
		{name: "long serial loop (prefix sum, serial task)", kernel: "scan", serial: true, size: sized(1<<20, 0), setup: setupScan},
		{name: "short rows (3 components)", kernel: "rows3", size: sized(3<<18, 3), setup: setupRows3},
		// Issue 25's classes, bar 1 per core (never slower than plain Go).
		{name: "class 1: short heavy loop (n-body, 3000 bodies)", kernel: "nbody1", bar: 1, size: sized(3000, 0), setup: setupUnary(nbody1)},
		{name: "class 2: rows of 2, force[i][0] += f in an inner loop", kernel: "pairForce", bar: 1, size: sized(1<<18, 2), setup: setupGrid2(nil, pairForce)},
		{name: "class 3: histogram (atomic add at data-dependent bins)", kernel: "histogram", bar: 1, size: sized(1<<20, 0), setup: setupScatterHist},
		{name: "class 4: rare branch (8 of 1024 true)", kernel: "rareBranch", bar: 1, size: sized(1<<20, 0), setup: setupUnary(rareBranch)},
		{name: "class 5: escape-time fractal (Mandelbrot)", kernel: "mandel", bar: 1, size: sized(1<<16, 0), setup: setupUnary(mandel)},
		{name: "class 6: integer / and % per element", kernel: "intDivRem", bar: 1, size: sized(1<<20, 0), setup: setupIntDivRem},
		{name: "class 7: 1×4 register-blocked matrix product (elements of c)", kernel: "matmul4", bar: 1, size: square(240), setup: setupMatmul4},
	}
}

// cpuConstructs measures every construct kernel on one core and on two
// against its plain-Go reference on one goroutine.
func (s *suite) cpuConstructs() error {
	return s.cpuTable("CPU constructs", cpuKernelSource, "cpu_kernels.go", cpuCases())
}

// cpuTable measures cases, kernels of src (named file), as cpuConstructs
// does.
func (s *suite) cpuTable(what, src, file string, cases []cpuCase) error {
	if s.gpu {
		s.skip(what, "CPU only: run qd bench -arch cpu")
		return nil
	}
	mod, err := qd.Compile(s.p, src, qd.WithFilename(file))
	if err != nil {
		return err
	}
	defer mod.Close()
	for _, c := range cases {
		s.logf("  %s ...", c.name)
		if err := s.cpuCase(mod, c); err != nil {
			s.add(Row{Name: "cpu " + c.name, Status: Fail, Note: "error: " + err.Error()})
		}
	}
	return nil
}

// cpuCase adds the rows of one construct.
func (s *suite) cpuCase(mod *qd.Module, c cpuCase) error {
	n, m := c.size(s.opt.Quick)
	run, err := c.prepare(s.p, mod, n, m)
	if err != nil {
		return err
	}
	defer run.close()
	st, err := s.p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := checkCPURun(st, run); err != nil {
		return err
	}
	reps := 1
	launch := func() error {
		for range reps {
			if err := run.launch(st); err != nil {
				return err
			}
		}
		return st.Synchronize()
	}
	plainRun := func() error {
		for range reps {
			run.plain()
		}
		return nil
	}
	// Rounds interleave the three timings, so that a disturbance of the
	// machine (another process taking a core) spoils one round of each
	// rather than all of one; each keeps its best round. Many short rounds
	// find the quiet moments of a shared machine.
	d, err := timed(1, 1, launch)
	if err != nil {
		return err
	}
	reps = cpuReps(s.opt.Quick, d)
	two := runtime.NumCPU() >= 2
	// Plain Go is timed twice a round: the two bests' difference is the
	// run's own spread, within which a per-core ratio over its bar is a
	// tie (the generated code is the same Go as the reference).
	one, plain, plainB, dual := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range s.pick(2, 15, 15) {
		if d, err = timed(1, reps, launch); err != nil {
			return err
		}
		one = min(one, d)
		d, _ = timed(1, reps, plainRun)
		plain = min(plain, d)
		if two {
			if d, err = timed(2, reps, launch); err != nil {
				return err
			}
			dual = min(dual, d)
		}
		d, _ = timed(1, reps, plainRun)
		plainB = min(plainB, d)
	}
	spread := math.Abs(ns(plain)/ns(plainB) - 1)
	plain = min(plain, plainB)
	perElem := func(d time.Duration) float64 { return ns(d) / float64(n) }
	r := Row{Name: "cpu " + c.name + ": qd on 1 core vs plain Go", Value: perElem(one), Unit: "ns/element",
		RefName: "plain Go, 1 goroutine", RefValue: perElem(plain), Ratio: ns(one) / ns(plain),
		Note: fmt.Sprintf("%d elements; ratio = qd time / plain-Go time", n)}
	if c.bar > 0 {
		barLE(&r, c.bar)
		if r.Status == Fail && spread <= maxTie && r.Ratio <= c.bar*(1+spread) {
			r.Status = Pass
			r.Note += fmt.Sprintf("; a tie: within plain Go's own spread in this run, %.1f%%", 100*spread)
		}
	} else {
		r.Status = Info
	}
	s.add(r)
	if !two {
		s.skip("cpu "+c.name+": 2 cores vs 1", "this machine has one core")
		return nil
	}
	r = Row{Name: "cpu " + c.name + ": qd on 2 cores vs 1", Value: ns(one) / ns(dual), Unit: "×",
		RefName: "ideal", RefValue: 2, Ratio: ns(one) / ns(dual),
		Note: fmt.Sprintf("%.3g ns/element on 2 cores; %.2f× plain Go's time", perElem(dual), ns(dual)/ns(plain))}
	switch {
	case c.serial:
		r.Status, r.Note = Info, r.Note+"; a serial task runs on one core"
	default:
		barGE(&r, 1.8)
	}
	s.add(r)
	if c.kernel == "heat" {
		r = Row{Name: "cpu heat step: qd on 2 cores vs plain Go on 1", Value: ns(dual) / 1e3, Unit: "µs",
			RefName: "plain Go, 1 goroutine", RefValue: ns(plain) / 1e3, Ratio: ns(dual) / ns(plain),
			Note: "the demo's bar: qd's best at least as fast as plain Go"}
		barLE(&r, 1)
		s.add(r)
	}
	return nil
}

// maxTie is the largest spread of plain Go against itself within which a
// per-core ratio just over its bar counts as a tie; a noisier run's
// ratios are taken as measured.
const maxTie = 0.03

// cpuReps is the launches per timing, for a launch that took d once: about
// 10 ms worth, at least 1 (Quick: 1).
func cpuReps(quick bool, d time.Duration) int {
	if quick {
		return 1
	}
	return int(min(1000, max(1, 10*time.Millisecond/max(d, 1))))
}

// timed is the mean time of one of reps runs that f makes, with GOMAXPROCS
// set to procs (the CPU backend uses that many cores) and then restored.
func timed(procs, reps int, f func() error) (time.Duration, error) {
	old := runtime.GOMAXPROCS(procs)
	defer runtime.GOMAXPROCS(old)
	t0 := time.Now()
	err := f()
	return time.Since(t0) / time.Duration(reps), err
}

// prepare sets the case up on p and mod with n elements (rows of m): its
// launch, unless the set-up made one, is the case's kernel with args.
func (c cpuCase) prepare(p *qd.Program, mod *qd.Module, n, m int) (*cpuRun, error) {
	run, err := c.setup(p, mod, n, m)
	if err != nil || run.launch != nil {
		return run, err
	}
	k, err := mod.Kernel(c.kernel)
	if err != nil {
		run.close()
		return nil, err
	}
	run.launch = func(st *qd.Stream) error { return k.LaunchOn(st, run.args...) }
	return run, nil
}

// checkCPURun runs the kernel once and its reference once, from the same
// inputs, and compares the outputs: a benchmark of a wrong result is void.
func checkCPURun(st *qd.Stream, run *cpuRun) error {
	if err := run.launch(st); err != nil {
		return err
	}
	if err := st.Synchronize(); err != nil {
		return err
	}
	run.plain()
	got, err := run.got()
	if err != nil {
		return err
	}
	want := run.want()
	if len(got) != len(want) {
		return fmt.Errorf("%d results, want %d", len(got), len(want))
	}
	for i := range got {
		d := math.Abs(got[i] - want[i])
		if !(d <= run.tol) && !(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			return fmt.Errorf("element %d: qd %v, plain Go %v", i, got[i], want[i])
		}
	}
	return nil
}
