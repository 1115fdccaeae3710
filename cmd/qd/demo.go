package main

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/quadrants-go/qd"
)

// heatKernels is the source of heat_kernels.go, compiled at run time by
// qd.Compile; the same file is part of this package, so heatStep also runs
// natively as the reference.
//
//go:embed heat_kernels.go
var heatKernels string

const demoUsage = `usage: qd demo [-arch auto|cpu|cuda|amdgpu] [-sims N] [-size N] [-steps N]

Run sims independent 2-D heat-diffusion simulations, written as Go kernels
(heat_kernels.go, compiled by qd at run time), on the best backend:

  1. one kernel launch per simulation and step, all on one stream, then each
     simulation on its own stream;
  2. one kernel that advances four simulations per launch, first as four
     loops in a row, then as four qd.StreamParallel groups (four streams).

Every run is checked against the same kernels called natively from Go, and
a table gives the times and speedups. On a terminal a progress line shows
the current phase; piped, each phase prints one plain line.

flags:
`

// groups is the number of qd.StreamParallel blocks of heatStep4Groups.
const groups = 4

type demoConfig struct {
	arch              qd.Arch
	sims, size, steps int
	tty               bool // progress as one updating line instead of plain lines
}

// demo is the demo verb. Usage errors exit 2; a failed run (no such
// backend, a result that differs from the reference) exits 1.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", stderr)
	archName := fs.String("arch", "auto", "backend: auto, cpu, cuda or amdgpu")
	sims := fs.Int("sims", 8, "number of independent simulations")
	size := fs.Int("size", 256, "grid `n` of each simulation (n × n cells)")
	steps := fs.Int("steps", 50, "time steps per simulation")
	if code, ok := parseFlags(fs, args, demoUsage, stdout, stderr); !ok {
		return code
	}
	bad := func(msg string) int { return usageError(fs, demoUsage, stderr, "qd demo: "+msg) }
	arch, ok := map[string]qd.Arch{"auto": qd.Auto, "cpu": qd.CPU, "cuda": qd.CUDA, "amdgpu": qd.AMDGPU}[strings.ToLower(*archName)]
	switch {
	case fs.NArg() > 0:
		return bad(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case !ok:
		return bad(fmt.Sprintf("-arch %q: want auto, cpu, cuda or amdgpu", *archName))
	case *sims < 1 || *sims > 4096:
		return bad(fmt.Sprintf("-sims %d is outside [1, 4096]", *sims))
	case *size < 3 || *size > 16384:
		return bad(fmt.Sprintf("-size %d is outside [3, 16384]", *size))
	case *steps < 1 || *steps > 1_000_000:
		return bad(fmt.Sprintf("-steps %d is outside [1, 1000000]", *steps))
	}
	cfg := demoConfig{arch: arch, sims: *sims, size: *size, steps: *steps, tty: isTerminal(stdout)}
	if err := runDemo(cfg, stdout); err != nil {
		fmt.Fprintln(stderr, "qd demo:", err)
		return 1
	}
	return 0
}

// plural is "1 thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	if strings.HasSuffix(thing, "h") {
		return fmt.Sprintf("%d %ses", n, thing)
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

const alpha = 0.2

// initial is simulation k's starting grid: a hot spot whose place depends
// on k, so every simulation differs.
func initial(k, size int) [][]float32 {
	g := make([][]float32, size)
	ci, cj := size/4+k%(size/2), size/2
	for i := range g {
		g[i] = make([]float32, size)
		for j := range g[i] {
			d := float64((i-ci)*(i-ci) + (j-cj)*(j-cj))
			g[i][j] = float32(100 * math.Exp(-d/float64(size)))
		}
	}
	return g
}

func flatten(g [][]float32) []float32 {
	out := make([]float32, 0, len(g)*len(g[0]))
	for _, row := range g {
		out = append(out, row...)
	}
	return out
}

// reference runs one simulation by calling the kernel natively.
func reference(g [][]float32, steps int) []float32 {
	a, b := g, make([][]float32, len(g))
	for i := range b {
		b[i] = make([]float32, len(g[i]))
	}
	for range steps {
		heatStep(a, b, alpha)
		a, b = b, a
	}
	return flatten(a)
}

// sim is one simulation's pair of grids: step t reads cur(t), writes next(t).
type sim struct{ a, b *qd.Ndarray[float32] }

func (s sim) in(t int) *qd.Ndarray[float32] {
	if t%2 == 0 {
		return s.a
	}
	return s.b
}

func (s sim) out(t int) *qd.Ndarray[float32] { return s.in(t + 1) }

// result is one timed run.
type result struct {
	name    string
	elapsed time.Duration
	maxErr  float64
}

func runDemo(cfg demoConfig, w io.Writer) (err error) {
	p, err := qd.Init(qd.WithArch(cfg.arch))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := p.Close(); err == nil {
			err = cerr
		}
	}()
	chunks := (cfg.sims + groups - 1) / groups
	fmt.Fprintf(w, "qd demo: %s of %d×%d cells, %s each, on %s\n",
		plural(cfg.sims, "heat simulation"), cfg.size, cfg.size, plural(cfg.steps, "step"), p.Device())

	prog := newProgress(w, cfg.tty, 6)
	defer prog.stop()

	prog.phase("compiling heat_kernels.go")
	start := time.Now()
	mod, err := qd.Compile(p, heatKernels, qd.WithFilename("heat_kernels.go"))
	if err != nil {
		return err
	}
	compiled := time.Since(start)
	k1, err := mod.Kernel("heatStep")
	if err != nil {
		return err
	}
	k4, err := mod.Kernel("heatStep4")
	if err != nil {
		return err
	}
	k4g, err := mod.Kernel("heatStep4Groups")
	if err != nil {
		return err
	}

	prog.phase("plain-Go reference (heatStep called natively)")
	start = time.Now()
	refs := make([][]float32, cfg.sims)
	for i := range refs {
		prog.detail(fmt.Sprintf("simulation %d/%d", i+1, cfg.sims))
		refs[i] = reference(initial(i, cfg.size), cfg.steps)
	}
	refTime := time.Since(start)

	// State for every simulation, padded to whole groups of four for the
	// stream-parallel runs (the padding is computed, never checked).
	state := make([]sim, chunks*groups)
	inits := make([][]float32, len(state))
	for i := range state {
		if state[i].a, err = qd.NewNdarray[float32](p, cfg.size, cfg.size); err != nil {
			return err
		}
		if state[i].b, err = qd.NewNdarray[float32](p, cfg.size, cfg.size); err != nil {
			return err
		}
		inits[i] = flatten(initial(i, cfg.size))
	}
	streams := make([]*qd.Stream, cfg.sims)
	for i := range streams {
		if streams[i], err = p.NewStream(); err != nil {
			return err
		}
	}
	// args4[c][t%2] are the arguments of heatStep4(Groups) for chunk c of
	// four simulations at step t, made before any timing starts.
	args4 := make([][2][]any, chunks)
	for c := range args4 {
		for t := range 2 {
			for _, s := range state[c*groups : (c+1)*groups] {
				args4[c][t] = append(args4[c][t], s.in(t), s.out(t))
			}
			args4[c][t] = append(args4[c][t], float32(alpha))
		}
	}

	// timed resets every simulation, runs launch(t) for every step t, waits
	// for all work and checks the results.
	timed := func(name string, launch func(t int) error) (result, error) {
		prog.phase(name)
		for i, s := range state {
			if err := s.a.CopyFromHost(inits[i]); err != nil {
				return result{}, err
			}
		}
		if err := p.Sync(); err != nil {
			return result{}, err
		}
		start := time.Now()
		for t := range cfg.steps {
			if t%8 == 0 {
				prog.detail(fmt.Sprintf("enqueued step %d/%d", t, cfg.steps))
			}
			if err := launch(t); err != nil {
				return result{}, err
			}
		}
		prog.detail(fmt.Sprintf("enqueued all %d steps; waiting for the device", cfg.steps))
		if err := p.Sync(); err != nil {
			return result{}, err
		}
		r := result{name: name, elapsed: time.Since(start)}
		for i, want := range refs {
			got, err := state[i].in(cfg.steps).ToSlice()
			if err != nil {
				return r, err
			}
			d, err := compare(got, want, cfg.size)
			if err != nil {
				return r, fmt.Errorf("%s: simulation %d: %w", name, i, err)
			}
			r.maxErr = math.Max(r.maxErr, d)
		}
		return r, nil
	}

	// Warm up: the first launch of a kernel may load its module (CUDA's
	// JIT) and start worker goroutines; no timed run should pay for that.
	s0 := state[0]
	if err := k1.Launch(s0.a, s0.b, float32(alpha)); err != nil {
		return err
	}
	if err := k4.Launch(args4[0][0]...); err != nil {
		return err
	}
	if err := k4g.Launch(args4[0][0]...); err != nil {
		return err
	}

	var results []result
	for _, run := range []struct {
		name   string
		launch func(t int) error
	}{
		{"all on one stream", func(t int) error {
			for _, s := range state[:cfg.sims] {
				if err := k1.Launch(s.in(t), s.out(t), float32(alpha)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"one stream per simulation", func(t int) error {
			for i, s := range state[:cfg.sims] {
				if err := k1.LaunchOn(streams[i], s.in(t), s.out(t), float32(alpha)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"4 loops, no groups", func(t int) error {
			for c := range chunks {
				if err := k4.Launch(args4[c][t%2]...); err != nil {
					return err
				}
			}
			return nil
		}},
		{fmt.Sprintf("%d StreamParallel groups", groups), func(t int) error {
			for c := range chunks {
				if err := k4g.Launch(args4[c][t%2]...); err != nil {
					return err
				}
			}
			return nil
		}},
	} {
		r, err := timed(run.name, run.launch)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	prog.stop()

	fmt.Fprintf(w, "compiled %d kernels from heat_kernels.go in %s\n\n", len(mod.Kernels()), short(compiled))
	row := func(name string, d time.Duration, speedup string) {
		line := fmt.Sprintf("  %-30s %12s %9s", name, short(d), speedup)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	x := func(base, r result) string { return fmt.Sprintf("%.2f×", float64(base.elapsed)/float64(r.elapsed)) }
	fmt.Fprintf(w, "%-32s %12s %9s\n", "run", "time", "speedup")
	fmt.Fprintf(w, "independent kernels, %s:\n", plural(cfg.sims*cfg.steps, "launch"))
	row(results[0].name, results[0].elapsed, "1.00×")
	row(results[1].name, results[1].elapsed, x(results[0], results[1]))
	pad := ""
	if chunks*groups != cfg.sims {
		pad = fmt.Sprintf(", padded to %d simulations", chunks*groups)
	}
	fmt.Fprintf(w, "one kernel for 4 simulations, %s%s:\n", plural(chunks*cfg.steps, "launch"), pad)
	row(results[2].name, results[2].elapsed, "1.00×")
	row(results[3].name, results[3].elapsed, x(results[2], results[3]))
	fmt.Fprintf(w, "plain Go, one goroutine:\n")
	row("heatStep called natively", refTime, "")
	maxErr := 0.0
	for _, r := range results {
		maxErr = math.Max(maxErr, r.maxErr)
	}
	match := "exactly"
	if maxErr > 0 {
		match = fmt.Sprintf("within %.2g (largest difference)", maxErr)
	}
	fmt.Fprintf(w, "\nall %d runs match the plain-Go reference %s\n", len(results), match)
	return nil
}

// short formats d with three or four significant digits: 1.13s, 403.9ms, 52µs.
func short(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
}

// compare checks a simulation against its reference and returns the
// largest absolute difference: exact on the CPU; GPUs may fuse
// multiply-adds, so a small relative error is allowed.
func compare(got, want []float32, size int) (float64, error) {
	worst := 0.0
	for i := range want {
		d := math.Abs(float64(got[i] - want[i]))
		if d > 1e-3*math.Max(1, math.Abs(float64(want[i]))) {
			return 0, fmt.Errorf("cell (%d, %d) = %v, the reference has %v", i/size, i%size, got[i], want[i])
		}
		worst = math.Max(worst, d)
	}
	return worst, nil
}

// progress shows what the demo is doing. On a terminal it is one line,
// rewritten in place several times a second with the phase, its detail and
// the time spent; otherwise each phase prints one plain line when it
// starts.
type progress struct {
	w     io.Writer
	tty   bool
	total int

	mu      sync.Mutex
	n       int
	name    string
	info    string
	start   time.Time
	done    chan struct{}
	stopped bool
	wg      sync.WaitGroup
}

func newProgress(w io.Writer, tty bool, total int) *progress {
	pr := &progress{w: w, tty: tty, total: total, done: make(chan struct{})}
	if tty {
		pr.wg.Add(1)
		go pr.loop()
	}
	return pr
}

func (pr *progress) loop() {
	defer pr.wg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-pr.done:
			return
		case <-tick.C:
			pr.mu.Lock()
			pr.draw()
			pr.mu.Unlock()
		}
	}
}

// draw rewrites the terminal line; pr.mu is held.
func (pr *progress) draw() {
	if pr.n == 0 {
		return
	}
	line := fmt.Sprintf("[%d/%d] %s", pr.n, pr.total, pr.name)
	if pr.info != "" {
		line += ": " + pr.info
	}
	fmt.Fprintf(pr.w, "\r\033[K%s  %.1fs", line, time.Since(pr.start).Seconds())
}

// phase starts the next phase.
func (pr *progress) phase(name string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.stopped {
		return
	}
	pr.n++
	pr.name, pr.info, pr.start = name, "", time.Now()
	if pr.tty {
		pr.draw()
		return
	}
	fmt.Fprintf(pr.w, "[%d/%d] %s\n", pr.n, pr.total, name)
}

// detail says where the current phase is (terminal only).
func (pr *progress) detail(s string) {
	pr.mu.Lock()
	pr.info = s
	pr.mu.Unlock()
}

// stop ends the display and clears the terminal line. It is idempotent.
func (pr *progress) stop() {
	pr.mu.Lock()
	if pr.stopped {
		pr.mu.Unlock()
		return
	}
	pr.stopped = true
	close(pr.done)
	pr.mu.Unlock()
	pr.wg.Wait()
	if pr.tty {
		fmt.Fprint(pr.w, "\r\033[K")
	}
}
