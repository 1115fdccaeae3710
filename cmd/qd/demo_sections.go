package main

import (
	"fmt"
	"math"
	"time"

	"github.com/quadrants-go/qd"
)

// demoRun is the state one demo run shares between its sections.
type demoRun struct {
	p    *qd.Program
	cfg  demoConfig
	gpu  bool
	prog *progress
	n    int // the section being run, from 1

	poly, walk, walk4, walk4G, heat *qd.Kernel

	runs   int     // qd runs checked
	maxErr float64 // largest difference from the reference
}

// sections are the demo's parts, in the order they run and print.
var sections = []func(*demoRun) (section, error){
	(*demoRun).overlap,
	(*demoRun).independent,
	(*demoRun).launchBound,
	(*demoRun).groups,
}

// chunks is the number of pieces section 1 cuts its array into.
const chunks = 16

// alpha is the heat simulations' diffusion coefficient.
const alpha = 0.2

// phase starts a progress phase of the current section.
func (d *demoRun) phase(what string) { d.prog.phase(fmt.Sprintf("section %d: %s", d.n, what)) }

// timed runs one qd row rounds times and keeps the fastest (a shared
// machine's noise only ever adds time): each round resets the data, waits
// for the device, then times run and the wait for the work it enqueued.
// The last round's results are what the caller checks.
func (d *demoRun) timed(name string, reset, run func() error) (row, error) {
	d.phase(name)
	best := time.Duration(math.MaxInt64)
	for range d.rounds() {
		if err := d.resetAndSync(reset); err != nil {
			return row{}, err
		}
		start := time.Now()
		if err := run(); err != nil {
			return row{}, err
		}
		if err := d.p.Synchronize(); err != nil {
			return row{}, err
		}
		best = min(best, time.Since(start))
	}
	return row{name: name, d: best}, nil
}

// rounds is how many times each qd row runs: 3 on the CPU, whose rows are
// short and whose cores other programs share; 2 on a GPU.
func (d *demoRun) rounds() int {
	if d.gpu {
		return 2
	}
	return 3
}

// resetAndSync runs reset and waits for the device: the reset's fills run
// on the default stream, which other streams do not wait for.
func (d *demoRun) resetAndSync(reset func() error) error {
	if err := reset(); err != nil {
		return err
	}
	return d.p.Synchronize()
}

// summarize sets s's summary from its speedup x, row 1 over row 0: gained
// (a format taking x) when the streams gained, else x and why not, on the
// CPU or on a GPU.
func (d *demoRun) summarize(s *section, gained, cpu, gpu string) {
	x := s.speedup(1)
	switch {
	case x >= 1.3:
		s.summary = fmt.Sprintf(gained, x)
	case !d.gpu:
		s.summary = fmt.Sprintf("%.2f×: %s", x, cpu)
	default:
		s.summary = fmt.Sprintf("%.2f×: %s", x, gpu)
	}
}

// check compares one run's result with the reference.
func (d *demoRun) check(run string, got, want []float32) error {
	diff, err := compare(got, want)
	if err != nil {
		return fmt.Errorf("section %d, %s: %w", d.n, run, err)
	}
	d.maxErr = math.Max(d.maxErr, diff)
	return nil
}

// fastest is the shortest of three runs of fn, each ended by fn's own
// wait: how long an operation takes, to size the work from.
func fastest(fn func() error) (time.Duration, error) {
	best := time.Duration(math.MaxInt64)
	for range 3 {
		start := time.Now()
		if err := fn(); err != nil {
			return 0, err
		}
		best = min(best, time.Since(start))
	}
	return max(best, time.Microsecond), nil
}

// scaled is how many steps of an operation measured at probe steps in t
// fit in want, at least 1.
func scaled(probe int64, t, want time.Duration) int64 {
	return max(int64(float64(probe)*want.Seconds()/t.Seconds()), 1)
}

func newStreams(p *qd.Program, n int) ([]*qd.Stream, error) {
	out := make([]*qd.Stream, n)
	for i := range out {
		s, err := p.NewStream()
		if err != nil {
			closeStreams(out[:i])
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func closeStreams(ss []*qd.Stream) {
	for _, s := range ss {
		s.Close()
	}
}

// overlap is section 1: an array processed in chunks, each copied in from
// a HostArray, worked on and copied back, on one stream and on several.
func (d *demoRun) overlap() (section, error) {
	p, n := d.p, d.cfg.elements
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i%1000) * 0.0009
	}
	h, err := qd.NewHostArray[float32](p, n)
	if err != nil {
		return section{}, err
	}
	defer h.Close()
	a, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return section{}, err
	}
	defer a.Close()
	streams, err := newStreams(p, d.cfg.streams)
	if err != nil {
		return section{}, err
	}
	defer closeStreams(streams)
	type chunk struct {
		a *qd.Ndarray[float32]
		h *qd.HostArray[float32]
	}
	parts := make([]chunk, chunks)
	for c := range parts {
		lo, hi := c*n/chunks, (c+1)*n/chunks
		if parts[c].a, err = a.Rows(lo, hi); err != nil {
			return section{}, err
		}
		if parts[c].h, err = h.Rows(lo, hi); err != nil {
			return section{}, err
		}
	}
	reset := func() error {
		hs, err := h.Data()
		copy(hs, src)
		return err
	}
	run := func(work int64, on []*qd.Stream) func() error {
		return func() error {
			for c, part := range parts {
				s := on[c%len(on)]
				if err := part.a.CopyFromHostOn(s, part.h); err != nil {
					return err
				}
				if err := d.poly.LaunchOn(s, part.a, work); err != nil {
					return err
				}
				if err := part.a.CopyToHostOn(s, part.h); err != nil {
					return err
				}
			}
			return nil
		}
	}

	// Work per element: as many multiply-adds as make a chunk's kernel
	// take as long as its copy in, so that there is something to overlap.
	d.phase("measuring a chunk's copy and kernel")
	if err := reset(); err != nil {
		return section{}, err
	}
	s0 := streams[0]
	copyT, err := fastest(func() error {
		if err := parts[0].a.CopyFromHostOn(s0, parts[0].h); err != nil {
			return err
		}
		return s0.Synchronize()
	})
	if err != nil {
		return section{}, err
	}
	const probe = 64
	kernT, err := fastest(func() error {
		if err := d.poly.LaunchOn(s0, parts[0].a, int64(probe)); err != nil {
			return err
		}
		return s0.Synchronize()
	})
	if err != nil {
		return section{}, err
	}
	work := min(scaled(probe, kernT, copyT), 1<<16)
	// One untimed pass touches every page of both arrays first.
	if err := run(work, streams)(); err != nil {
		return section{}, err
	}

	// The reference, on a sample of the elements.
	stride := max(n/4096, 1)
	sample := make([]float32, 0, n/stride+1)
	for i := 0; i < n; i += stride {
		sample = append(sample, src[i])
	}
	poly(sample, work)
	// Plain Go's time for the same work, the copies included (in from
	// the host array, the kernel, back out), on 1/stride of the array,
	// scaled up: the fastest of three.
	m := n / stride
	buf, back := make([]float32, m), make([]float32, m)
	goTime, _ := fastest(func() error {
		copy(buf, src[:m])
		poly(buf, work)
		copy(back, buf)
		return nil
	})
	goTime *= time.Duration(stride)

	rows := make([]row, 0, 3)
	for _, r := range []struct {
		name string
		on   []*qd.Stream
	}{{"one stream", streams[:1]}, {fmt.Sprintf("%d streams, chunks in turn", len(streams)), streams}} {
		got, err := d.timed(r.name, reset, run(work, r.on))
		if err != nil {
			return section{}, err
		}
		hs, err := h.Data()
		if err != nil {
			return section{}, err
		}
		picked := make([]float32, len(sample))
		for j := range picked {
			picked[j] = hs[j*stride]
		}
		if err := d.check(r.name, picked, sample); err != nil {
			return section{}, err
		}
		d.runs++
		rows = append(rows, got)
	}
	rows = append(rows, row{name: "plain Go, one goroutine", d: goTime,
		note: fmt.Sprintf("(copies and kernel, timed on 1/%d of the elements)", stride)})
	s := section{
		title: fmt.Sprintf("1. copy/compute overlap: %s float32 in %d chunks, each copied in from a HostArray, worked on (%s an element) and copied back",
			count(n), chunks, plural(int(work), "multiply-add")),
		rows: rows,
	}
	d.summarize(&s,
		fmt.Sprintf("on %d streams one chunk's copy in, another's kernel and a third's copy out run at once: %%.1f× faster than one stream, where each waits for the one before", len(streams)),
		"on the CPU a copy is a memory copy on the same cores as the kernels, so there is little to overlap",
		"copies and kernels overlapped little here; a larger -elements gives them more to overlap")
	return s, nil
}

// walkers is one Monte Carlo simulation's state on the device and where
// it starts.
type walkers struct {
	s  *qd.Ndarray[uint32]
	x  *qd.Ndarray[int32]
	s0 []uint32
}

func newWalkers(p *qd.Program, sims, n int) ([]walkers, error) {
	out := make([]walkers, sims)
	for k := range out {
		w := &out[k]
		var err error
		if w.s, err = qd.NewNdarray[uint32](p, n); err != nil {
			closeWalkers(out[:k])
			return nil, err
		}
		if w.x, err = qd.NewNdarray[int32](p, n); err != nil {
			w.s.Close()
			closeWalkers(out[:k])
			return nil, err
		}
		w.s0 = make([]uint32, n)
		for i := range w.s0 {
			w.s0[i] = uint32(i)*2654435761 + uint32(k)*97 + 1
		}
	}
	return out, nil
}

func closeWalkers(ws []walkers) {
	for _, w := range ws {
		w.s.Close()
		w.x.Close()
	}
}

// args are w's kernel arguments.
func (w walkers) args() []any { return []any{w.s, w.x} }

// resetWalkers puts every simulation back at its start.
func resetWalkers(p *qd.Program, ws []walkers) error {
	for _, w := range ws {
		if err := w.s.CopyFromHost(w.s0); err != nil {
			return err
		}
		if err := w.x.FillOn(p.DefaultStream(), 0); err != nil {
			return err
		}
	}
	return nil
}

// walkReference is what steps steps leave in ws: every generator state
// (computed in one jump, a product of affine maps), and the position of
// a sample of walkers, stepped natively. It returns how long plain Go
// would take for every walker, from its time on the sample.
type walkReference struct {
	stride int
	states [][]uint32
	pos    [][]int32 // positions of walkers 0, stride, 2·stride, ...
	goTime time.Duration
}

func newWalkReference(ws []walkers, steps int64) walkReference {
	n := len(ws[0].s0)
	// 32 sampled walkers in all, or at least one per simulation.
	r := walkReference{stride: max(n*len(ws)/32, 1)}
	r.stride = min(r.stride, n)
	mul, add := lcgJump(steps)
	sampled := 0
	var spent time.Duration
	for _, w := range ws {
		st := make([]uint32, n)
		for i, s := range w.s0 {
			st[i] = mul*s + add
		}
		r.states = append(r.states, st)
		var pos []int32
		start := time.Now()
		for i := 0; i < n; i += r.stride {
			_, x := walkRun(w.s0[i], 0, steps)
			pos = append(pos, x)
		}
		spent += time.Since(start)
		sampled += len(pos)
		r.pos = append(r.pos, pos)
	}
	r.goTime = time.Duration(float64(spent) * float64(n*len(ws)) / float64(sampled))
	return r
}

// lcgJump is the affine map s ↦ mul·s + add of steps steps of walkRun's
// generator, by repeated squaring.
func lcgJump(steps int64) (mul, add uint32) {
	mul, add = 1, 0
	a, c := uint32(1664525), uint32(1013904223)
	for ; steps > 0; steps >>= 1 {
		if steps&1 != 0 {
			mul, add = a*mul, a*add+c
		}
		a, c = a*a, a*c+c
	}
	return mul, add
}

// checkWalkers compares every simulation with the reference.
func (d *demoRun) checkWalkers(run string, ws []walkers, ref walkReference) error {
	for k, w := range ws {
		st, err := w.s.ToSlice()
		if err != nil {
			return err
		}
		x, err := w.x.ToSlice()
		if err != nil {
			return err
		}
		for i, want := range ref.states[k] {
			if st[i] != want {
				return fmt.Errorf("section %d, %s: simulation %d walker %d: generator state %d, the reference has %d", d.n, run, k, i, st[i], want)
			}
		}
		for j, want := range ref.pos[k] {
			if got := x[j*ref.stride]; got != want {
				return fmt.Errorf("section %d, %s: simulation %d walker %d: position %d, the reference has %d", d.n, run, k, j*ref.stride, got, want)
			}
		}
	}
	d.runs++
	return nil
}

// independent is section 2: simulations that each keep part of a GPU busy,
// on one stream and on a stream each.
func (d *demoRun) independent() (section, error) {
	p, sims, n := d.p, d.cfg.sims, d.cfg.walkers
	ws, err := newWalkers(p, sims, n)
	if err != nil {
		return section{}, err
	}
	defer closeWalkers(ws)
	streams, err := newStreams(p, sims)
	if err != nil {
		return section{}, err
	}
	defer closeStreams(streams)
	reset := func() error { return resetWalkers(p, ws) }

	d.phase("measuring one simulation's kernel")
	if err := d.resetAndSync(reset); err != nil {
		return section{}, err
	}
	const probe = 1024
	t, err := fastest(func() error {
		if err := d.walk.LaunchOn(streams[0], ws[0].s, ws[0].x, int64(probe)); err != nil {
			return err
		}
		return streams[0].Synchronize()
	})
	if err != nil {
		return section{}, err
	}
	steps := scaled(probe, t, d.cfg.budget/time.Duration(sims))
	ref := newWalkReference(ws, steps)

	launch := func(on func(k int) *qd.Stream) func() error {
		return func() error {
			for k, w := range ws {
				if err := d.walk.LaunchOn(on(k), append(w.args(), steps)...); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var rows []row
	for _, r := range []struct {
		name string
		on   func(k int) *qd.Stream
	}{
		{"one stream", func(int) *qd.Stream { return streams[0] }},
		{"a stream per simulation", func(k int) *qd.Stream { return streams[k] }},
	} {
		got, err := d.timed(r.name, reset, launch(r.on))
		if err != nil {
			return section{}, err
		}
		if err := d.checkWalkers(r.name, ws, ref); err != nil {
			return section{}, err
		}
		rows = append(rows, got)
	}
	rows = append(rows, row{name: "plain Go, one goroutine", d: ref.goTime,
		note: fmt.Sprintf("(timed on 1/%d of the walkers)", ref.stride)})
	s := section{
		title: fmt.Sprintf("2. independent work: %s of %s, %s steps each",
			plural(sims, "Monte Carlo simulation"), plural(n, "random walker"), count(int(steps))),
		rows: rows,
	}
	d.summarize(&s,
		"one simulation keeps only part of the device busy; on one stream they run one after another, on their own streams side by side: %.1f× faster",
		"on the CPU every kernel already spreads over all the cores, so running several at once gains nothing",
		"each simulation fills the device already (a smaller -walkers shows the overlap)")
	return s, nil
}

// heatSim is one heat simulation's pair of grids: step t reads in(t) and
// writes out(t).
type heatSim struct{ a, b *qd.Ndarray[float32] }

func (h heatSim) in(t int) *qd.Ndarray[float32] {
	if t%2 == 0 {
		return h.a
	}
	return h.b
}

func (h heatSim) out(t int) *qd.Ndarray[float32] { return h.in(t + 1) }

// initial is heat simulation k's starting grid: a hot spot whose place
// depends on k, so every simulation differs.
func initial(k, size int) [][]float32 {
	g := make([][]float32, size)
	ci, cj := size/4+k%max(size/2, 1), size/2
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

// heatReference runs one simulation by calling heatStep natively.
func heatReference(g [][]float32, steps int) []float32 {
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
