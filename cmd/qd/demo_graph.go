package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/quadrants-go/qd"
)

// launchBound is section 3: small heat steps, too short to be worth their
// launch, launched one by one and replayed from a graph.
func (d *demoRun) launchBound() (section, error) {
	p, sims, size, steps := d.p, d.cfg.sims, d.cfg.size, d.cfg.steps
	state := make([]heatSim, sims)
	inits := make([][]float32, sims)
	grids := make([][][]float32, sims)
	defer func() {
		for _, h := range state {
			if h.a != nil {
				h.a.Close()
			}
			if h.b != nil {
				h.b.Close()
			}
		}
	}()
	var err error
	for k := range state {
		if state[k].a, err = qd.NewNdarray[float32](p, size, size); err != nil {
			return section{}, err
		}
		if state[k].b, err = qd.NewNdarray[float32](p, size, size); err != nil {
			return section{}, err
		}
		grids[k] = initial(k, size)
		inits[k] = flatten(grids[k]) // a copy: heatReference steps grids in place
	}
	streams, err := newStreams(p, sims+1)
	if err != nil {
		return section{}, err
	}
	defer closeStreams(streams)
	origin, streams := streams[0], streams[1:]
	reset := func() error {
		for k, h := range state {
			if err := h.a.CopyFromHost(inits[k]); err != nil {
				return err
			}
		}
		return nil
	}
	// launch enqueues every step of every simulation, each simulation on
	// its own stream, step by step.
	launch := func() error {
		for t := range steps {
			for k, h := range state {
				if err := d.heat.LaunchOn(streams[k], h.in(t), h.out(t), float32(alpha)); err != nil {
					return err
				}
			}
		}
		return nil
	}

	d.phase("plain-Go reference (heatStep called natively)")
	refs := make([][]float32, sims)
	start := time.Now()
	for k, g := range grids {
		refs[k] = heatReference(g, steps)
	}
	goTime := time.Since(start)
	check := func(run string) error {
		for k, h := range state {
			got, err := h.in(steps).ToSlice()
			if err != nil {
				return err
			}
			if err := d.check(fmt.Sprintf("%s, simulation %d", run, k), got, refs[k]); err != nil {
				return err
			}
		}
		d.runs++
		return nil
	}

	// The graph: the same launches, captured on origin with every
	// simulation's stream forked from it and joined back into it.
	d.phase("capturing the launches into a graph")
	if err := d.resetAndSync(reset); err != nil {
		return section{}, err
	}
	g, err := origin.Capture(func() error {
		for _, s := range streams {
			if err := s.WaitStream(origin); err != nil {
				return err
			}
		}
		if err := launch(); err != nil {
			return err
		}
		for _, s := range streams {
			if err := origin.WaitStream(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return section{}, err
	}
	defer g.Close()
	replay := func() error { return g.LaunchOn(origin) }
	// Warm up both ways, one after the other (both write the grids): a
	// first launch may load a module, a first replay upload the graph.
	if err := launch(); err != nil {
		return section{}, err
	}
	if err := d.p.Synchronize(); err != nil {
		return section{}, err
	}
	if err := replay(); err != nil {
		return section{}, err
	}

	var rows []row
	for _, r := range []struct {
		name string
		run  func() error
	}{
		{"launched one by one, a stream each", launch},
		{"captured once, replayed as a graph", replay},
	} {
		got, err := d.timed(r.name, reset, r.run)
		if err != nil {
			return section{}, err
		}
		if err := check(r.name); err != nil {
			return section{}, err
		}
		rows = append(rows, got)
	}
	rows = append(rows, row{name: "plain Go, one goroutine", d: goTime})
	launches := sims * steps
	s := section{
		title: fmt.Sprintf("3. launch-bound work: %s of %d×%d cells, %s each: %s kernels",
			plural(sims, "heat simulation"), size, size, plural(steps, "step"), count(launches)),
		rows: rows,
	}
	per := rows[0].d / time.Duration(launches)
	d.summarize(&s,
		fmt.Sprintf("a step is over sooner than the host can launch the next (%s a launch); the graph enqueues all %s with one call: %%.1f× faster", short(per), count(launches)),
		"on the CPU a launch costs little, so replaying a graph saves little",
		"the steps are long enough to hide their launches (a smaller -size shows the effect)")
	return s, nil
}

// groups is section 4: one kernel with four independent loops, one after
// the other and as four stream-parallel groups.
func (d *demoRun) groups() (section, error) {
	p, n := d.p, d.cfg.walkers
	ws, err := newWalkers(p, 4, n)
	if err != nil {
		return section{}, err
	}
	defer closeWalkers(ws)
	reset := func() error { return resetWalkers(p, ws) }
	args := func(steps int64) []any {
		var out []any
		for _, w := range ws {
			out = append(out, w.args()...)
		}
		return append(out, steps)
	}

	d.phase("measuring the kernel")
	if err := d.resetAndSync(reset); err != nil {
		return section{}, err
	}
	const probe = 1024
	s0 := p.DefaultStream()
	t, err := fastest(func() error {
		if err := d.walk4.LaunchOn(s0, args(probe)...); err != nil {
			return err
		}
		if err := d.walk4G.LaunchOn(s0, args(1)...); err != nil { // warms up the groups' streams
			return err
		}
		return s0.Synchronize()
	})
	if err != nil {
		return section{}, err
	}
	steps := scaled(probe, t, d.cfg.budget)
	ref := newWalkReference(ws, steps)

	var rows []row
	for _, r := range []struct {
		name string
		k    *qd.Kernel
	}{
		{"4 loops, one after the other", d.walk4},
		{"4 StreamParallel groups", d.walk4G},
	} {
		got, err := d.timed(r.name, reset, func() error { return r.k.Launch(args(steps)...) })
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
		title: fmt.Sprintf("4. stream-parallel groups: one kernel, 4 loops of %s, %s steps each",
			plural(n, "random walker"), count(int(steps))),
		rows: rows,
	}
	d.summarize(&s,
		"each loop keeps only part of the device busy; as groups the kernel runs them on 4 pooled streams at once, inside one launch: %.1f× faster",
		"on the CPU each loop already spreads over all the cores, so running the loops at once gains nothing",
		"each loop fills the device already (a smaller -walkers shows the overlap)")
	return s, nil
}

// count writes n with thousands separated: 67,108,864.
func count(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
