package main

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"time"

	"github.com/quadrants-go/qd"
)

// demoKernels is the source of demo_kernels.go, compiled at run time by
// qd.Compile; the same file is part of this package, so its kernels also
// run natively as the plain-Go reference.
//
//go:embed demo_kernels.go
var demoKernels string

const demoUsage = `usage: qd demo [-arch auto|cpu|cuda|amdgpu] [-device n] [flags]

Show four ways streams pay off, with kernels written in Go
(demo_kernels.go, compiled by qd at run time) on the best backend:

  1. copy/compute overlap: an array processed in chunks, each copied in
     from page-locked host memory, worked on and copied back, on one
     stream and then round-robin on several;
  2. independent work: simulations that each keep only part of a GPU
     busy, on one stream and then on a stream each;
  3. launch-bound work: small heat-diffusion steps launched one by one,
     and captured once into a graph and replayed;
  4. stream-parallel groups: one kernel with four independent loops, run
     one after the other and as four qd.StreamParallel groups.

Sizes come from the device (its multiprocessors and memory); the flags
override them. Every run is checked against the same kernels called
natively from Go on one goroutine, and each section ends with a line
saying what its numbers mean. On a terminal a progress line shows the
current phase; piped, each phase prints one plain line.

flags:
`

// demoPhases is the number of progress phases: compiling, then three for
// each section (sizing and two qd runs) and one more for capturing the
// graph.
const demoPhases = 1 + 3*4 + 1

// demoConfig is what a demo run does; zero sizes are chosen from the
// device (sizeFor).
type demoConfig struct {
	arch     qd.Arch
	device   int           // the device's ordinal within its backend
	sims     int           // simulations of sections 2 and 3
	size     int           // heat grid of section 3: size × size cells
	steps    int           // heat steps of section 3
	walkers  int           // random walkers per simulation, sections 2 and 4
	elements int           // float32 elements of section 1
	streams  int           // streams of section 1
	budget   time.Duration // about how long each section's slowest qd run takes
	trace    string        // file to write a trace to, or ""
	traceOut *traceOut     // that file, opened before the run
	tty      bool          // progress as one updating line instead of plain lines
}

// demo is the demo verb. Usage errors exit 2; a failed run (no such
// backend, a result that differs from the reference) exits 1.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", stderr)
	archName := fs.String("arch", "auto", "backend: auto, cpu, cuda, amdgpu or vulkan")
	device := fs.Int("device", 0, "device `n` of the backend (qd devices lists them)")
	sims := fs.Int("sims", 16, "independent simulations in sections 2 and 3")
	size := fs.Int("size", 0, "heat grid `n` of section 3 (n × n cells; 0: from the device)")
	steps := fs.Int("steps", 50, "heat steps of section 3")
	walkers := fs.Int("walkers", 0, "random walkers per simulation in sections 2 and 4 (0: from the device)")
	elements := fs.Int("elements", 0, "float32 elements of section 1 (0: from the device)")
	streams := fs.Int("streams", 4, "streams of section 1")
	budget := fs.Duration("time", 0, "about how long each section's slowest qd run takes (0: 50ms on a GPU, 300ms on the CPU)")
	trace := fs.String("trace", "", "write a trace of the run to `file` (render it with qd trace)")
	if code, ok := parseFlags(fs, args, demoUsage, stdout, stderr); !ok {
		return code
	}
	bad := func(msg string) int { return usageError(fs, demoUsage, stderr, "qd demo: "+msg) }
	arch, ok := map[string]qd.Arch{"auto": qd.Auto, "cpu": qd.CPU, "cuda": qd.CUDA, "amdgpu": qd.AMDGPU, "vulkan": qd.Vulkan}[strings.ToLower(*archName)]
	switch {
	case fs.NArg() > 0:
		return bad(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case !ok:
		return bad(fmt.Sprintf("-arch %q: want auto, cpu, cuda or amdgpu", *archName))
	case *device < 0:
		return bad(fmt.Sprintf("-device %d: device ordinals start at 0", *device))
	case *sims < 1 || *sims > 1024:
		return bad(fmt.Sprintf("-sims %d is outside [1, 1024]", *sims))
	case *size != 0 && (*size < 3 || *size > 16384):
		return bad(fmt.Sprintf("-size %d is outside [3, 16384]", *size))
	case *steps < 1 || *steps > 100_000:
		return bad(fmt.Sprintf("-steps %d is outside [1, 100000]", *steps))
	case *walkers < 0 || *walkers > 1<<24:
		return bad(fmt.Sprintf("-walkers %d is outside [1, %d] (0: from the device)", *walkers, 1<<24))
	case *elements != 0 && (*elements < chunks || *elements > 1<<30):
		return bad(fmt.Sprintf("-elements %d is outside [%d, %d]", *elements, chunks, 1<<30))
	case *streams < 1 || *streams > 64:
		return bad(fmt.Sprintf("-streams %d is outside [1, 64]", *streams))
	case *budget < 0 || *budget > time.Minute:
		return bad(fmt.Sprintf("-time %s is outside [0, 1m]", *budget))
	}
	cfg := demoConfig{arch: arch, device: *device, sims: *sims, size: *size, steps: *steps, walkers: *walkers,
		elements: *elements, streams: *streams, budget: *budget, trace: *trace, tty: isTerminal(stdout)}
	if cfg.trace != "" {
		// Open the trace's file before the demo runs, so that a path that
		// cannot be written fails now rather than after the whole run.
		out, err := openTraceOut(cfg.trace)
		if err != nil {
			fmt.Fprintln(stderr, "qd demo: -trace:", err)
			return 1
		}
		cfg.traceOut = out
	}
	if err := runDemo(cfg, stdout); err != nil {
		cfg.traceOut.discard()
		fmt.Fprintln(stderr, "qd demo:", err)
		return 1
	}
	return 0
}

// traceOut is the file a trace will be written to, opened before the run.
type traceOut struct {
	f       *os.File
	created bool // the file did not exist: a failed run removes it
}

// openTraceOut opens name for writing without truncating it, creating it
// if need be: a file that was there stays as it was until the trace
// replaces it.
func openTraceOut(name string) (*traceOut, error) {
	_, err := os.Stat(name)
	created := errors.Is(err, fs.ErrNotExist)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	return &traceOut{f: f, created: created}, nil
}

// write replaces the file's contents with what p recorded; once it
// succeeds, discard leaves the file alone.
func (t *traceOut) write(p *qd.Program) error {
	err := t.f.Truncate(0)
	if err == nil {
		err = p.StopTrace(t.f)
	}
	if err == nil {
		err = t.f.Close()
	}
	if err != nil {
		t.discard()
		return err
	}
	t.f = nil
	return nil
}

// discard closes the file, removing it if the run created it, so that a
// failed run leaves no empty or partial trace behind. A nil t does
// nothing.
func (t *traceOut) discard() {
	if t == nil || t.f == nil {
		return
	}
	t.f.Close()
	if t.created {
		os.Remove(t.f.Name())
	}
	t.f = nil
}

// sizeFor fills in the sizes cfg leaves at zero from the device: 64
// random walkers per GPU multiprocessor in each simulation, a sixteenth of
// what the GPU holds at once, so that many simulations fit side by side; a
// heat grid of 128² cells, whose steps a GPU finishes in microseconds; the
// largest pipeline array up to 2^26 elements that takes at most an eighth
// of the device's memory.
func sizeFor(cfg demoConfig, in qd.DeviceInfo) demoConfig {
	gpu := in.Arch != qd.CPU
	if cfg.walkers == 0 {
		cfg.walkers = 2048
		if gpu {
			cfg.walkers = max(in.Cores, 1) * 64
		}
	}
	if cfg.size == 0 {
		// On a GPU a step of 128² cells is over in microseconds; on the
		// CPU it is long enough that qd's launches do not decide the time.
		cfg.size = 128
	}
	if cfg.elements == 0 {
		cfg.elements = 1 << 22
		if gpu {
			cfg.elements = 1 << 26
			for cfg.elements > 1<<20 && in.MemoryBytes != 0 && uint64(cfg.elements)*4*8 > in.MemoryBytes {
				cfg.elements /= 2
			}
		}
	}
	if cfg.budget == 0 {
		cfg.budget = 300 * time.Millisecond
		if gpu {
			cfg.budget = 50 * time.Millisecond
		}
	}
	return cfg
}

func runDemo(cfg demoConfig, w io.Writer) (err error) {
	p, err := qd.Init(qd.WithArch(cfg.arch), qd.WithDevice(cfg.device))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := p.Close(); err == nil {
			err = cerr
		}
	}()
	info := p.Device()
	cfg = sizeFor(cfg, info)
	fmt.Fprintf(w, "qd demo on %s: four ways streams pay off, each checked against plain Go\n", describe(info))

	d := &demoRun{p: p, cfg: cfg, gpu: info.Arch != qd.CPU}
	d.prog = newProgress(w, cfg.tty, demoPhases)
	defer d.prog.stop()

	d.prog.phase("compiling demo_kernels.go")
	start := time.Now()
	mod, err := qd.Compile(p, demoKernels, qd.WithFilename("demo_kernels.go"))
	if err != nil {
		return err
	}
	compiled := time.Since(start)
	for _, k := range []struct {
		k    **qd.Kernel
		name string
	}{{&d.poly, "poly"}, {&d.walk, "walk"}, {&d.walk4, "walk4"}, {&d.walk4G, "walk4Groups"}, {&d.heat, "heatStep"}} {
		if *k.k, err = mod.Kernel(k.name); err != nil {
			return err
		}
	}
	if cfg.traceOut != nil {
		if err := p.StartTrace(); err != nil {
			return err
		}
	}

	var out []section
	for i, sec := range sections {
		d.n = i + 1
		s, err := sec(d)
		if err != nil {
			return err
		}
		out = append(out, s)
	}
	d.prog.stop()

	fmt.Fprintf(w, "compiled %d kernels from demo_kernels.go in %s\n", len(mod.Kernels()), short(compiled))
	for _, s := range out {
		s.print(w)
	}
	match := "exactly"
	if d.maxErr > 0 {
		match = fmt.Sprintf("within %.2g (largest difference)", d.maxErr)
	}
	fmt.Fprintf(w, "\nall %d qd runs match the plain-Go reference %s\n", d.runs, match)
	if cfg.traceOut != nil {
		if err := cfg.traceOut.write(p); err != nil {
			return err
		}
		fmt.Fprintf(w, "trace written to %s (the timings above include tracing); render it with: qd trace %s\n", cfg.trace, cfg.trace)
	}
	return nil
}

// describe names a device with what sizes the demo: "NVIDIA H100 80GB HBM3
// (132 multiprocessors, 79.2 GiB)", "Intel Xeon (2 cores)".
func describe(in qd.DeviceInfo) string {
	name := in.Name
	if name == "" {
		name = in.Arch.String()
	}
	if in.Arch == qd.CPU {
		return fmt.Sprintf("%s (CPU, %s)", name, plural(in.Cores, "core"))
	}
	return fmt.Sprintf("%s (%s, %.1f GiB)", name, plural(in.Cores, "multiprocessor"), float64(in.MemoryBytes)/(1<<30))
}

// section is one part of the demo's report.
type section struct {
	title   string
	rows    []row // the first is the base of the speedups
	summary string
}

// row is one timed run of a section.
type row struct {
	name string
	d    time.Duration
	note string
}

func (s section) print(w io.Writer) {
	fmt.Fprintf(w, "\n%s\n", s.title)
	for i, r := range s.rows {
		line := fmt.Sprintf("  %-40s %9s %8.2f×  %s", r.name, short(r.d), s.speedup(i), r.note)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintf(w, "  → %s\n", s.summary)
}

// speedup is how many times faster the section's row i is than its first.
func (s section) speedup(i int) float64 { return s.rows[0].d.Seconds() / s.rows[i].d.Seconds() }

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

// compare checks got against want and returns the largest absolute
// difference: exact on the CPU; a small relative error is allowed, for
// math that a GPU or the Go compiler on some machines fuses into
// multiply-adds.
func compare(got, want []float32) (float64, error) {
	worst := 0.0
	for i := range want {
		d := math.Abs(float64(got[i] - want[i]))
		if !(d <= 1e-3*math.Max(1, math.Abs(float64(want[i])))) {
			return 0, fmt.Errorf("element %d = %v, the reference has %v", i, got[i], want[i])
		}
		worst = math.Max(worst, d)
	}
	return worst, nil
}
