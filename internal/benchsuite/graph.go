package benchsuite

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/lower"
)

// Graphs (Stream.Capture, Graph.LaunchOn), two workloads:
//
//   - a chain of 100 small dependent kernels (saxpy on 1024 elements, each
//     reading what the last wrote): one replay of the graph against the
//     100 launches, end to end (enqueue, then wait), bar ≥ 2.5×;
//   - one 4-group stream-parallel kernel (spin4_groups with 16 steps per
//     group: tiny groups, so the launch's forks and joins dominate),
//     captured once: 100 replays against 100 launches, end to end, with
//     the same bar.
//
// For each, the host cost of one LaunchOn of the graph is reported beside
// a raw launch of the same graph through the driver's bindings
// (backend.RawGraphLauncher), captured on the suite's reference device.

const (
	graphChain = 100  // kernels in the chain's graph
	graphN     = 1024 // elements of the chain's arrays
	spIters    = 16   // steps of each group of the stream-parallel kernel
	spRepeats  = 100  // replays (and launches) of the stream-parallel graph
)

func (s *suite) graphs() error {
	p := s.p
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	saxpy, err := benchKernel(p, "saxpy")
	if err != nil {
		return err
	}
	x, err := qd.NewNdarray[float32](p, graphN)
	if err != nil {
		return err
	}
	defer x.Close()
	y, err := qd.NewNdarray[float32](p, graphN)
	if err != nil {
		return err
	}
	defer y.Close()
	chain := func() error {
		for range graphChain {
			if err := saxpy.LaunchOn(st, float32(0.5), x, y, int64(graphN)); err != nil {
				return err
			}
		}
		return nil
	}
	err = s.graphRows(st, "graph of 100 small dependent kernels", chain, 1,
		"1 replay against 100 LaunchOn of saxpy (1024 elements), then a wait", 32,
		func() (backend.GraphExec, backend.Stream, error) { return s.rawChain() })
	if err != nil {
		return err
	}

	sp, err := benchKernel(p, "spin4_groups")
	if err != nil {
		return err
	}
	state, err := qd.NewNdarray[int64](p, 4)
	if err != nil {
		return err
	}
	defer state.Close()
	once := func() error { return sp.LaunchOn(st, state, int64(spIters)) }
	return s.graphRows(st, "graph of a 4-group stream-parallel kernel", once, spRepeats,
		"100 replays against 100 LaunchOn of spin4_groups (16 steps per group), then a wait", syncEvery,
		func() (backend.GraphExec, backend.Stream, error) { return s.rawGroups() })
}

// graphRows measures work captured as a graph, replayed times times,
// against launching it times times, end to end; and the host cost of one
// LaunchOn of the graph (bursts of burst) beside raw's.
func (s *suite) graphRows(st *qd.Stream, name string, work func() error, times int, how string, burst int,
	raw func() (backend.GraphExec, backend.Stream, error)) error {
	g, err := st.Capture(work)
	if err != nil {
		return err
	}
	defer g.Close()
	run := func(f func() error) (time.Duration, error) {
		t0 := time.Now()
		for range times {
			if err := f(); err != nil {
				return 0, err
			}
		}
		err := st.Synchronize()
		return time.Since(t0), err
	}
	replay := func() error { return g.LaunchOn(st) }
	for range 3 { // warm: pools, the driver's first replays
		if _, err := run(work); err != nil {
			return err
		}
		if _, err := run(replay); err != nil {
			return err
		}
	}
	rounds := s.pick(3, 10, 40)
	launched, replayed := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	for range rounds {
		d, err := run(work)
		if err != nil {
			return err
		}
		launched = min(launched, d)
		if d, err = run(replay); err != nil {
			return err
		}
		replayed = min(replayed, d)
	}
	sp := float64(launched) / float64(replayed)
	row := Row{Name: name + ": replay speedup, end to end", Value: sp, Unit: "×", Ratio: sp,
		Note: fmt.Sprintf("%s: launches %.1f µs, graph %.1f µs; fastest of %d rounds each", how, us(launched), us(replayed), rounds)}
	if s.gpu {
		barGE(&row, 2.5)
	} else {
		row.Status, row.Ratio = Info, 0
		row.Note += "; the bar is for GPUs"
	}
	s.add(row)

	cost, err := best(rounds, func() (time.Duration, error) {
		t0 := time.Now()
		for range burst {
			if err := g.LaunchOn(st); err != nil {
				return 0, err
			}
		}
		d := time.Since(t0)
		return d / time.Duration(burst), st.Synchronize()
	})
	if err != nil {
		return err
	}
	host := Row{Name: name + ": host cost of one LaunchOn", Value: us(cost), Unit: "µs", Status: Info,
		Note: fmt.Sprintf("mean per call of the fastest of %d bursts of %d", rounds, burst)}
	if s.gpu {
		x, rs, err := raw()
		if err != nil {
			return err
		}
		rl, ok := x.(backend.RawGraphLauncher)
		if !ok {
			return fmt.Errorf("the %s backend has no raw graph launch reference", s.p.Arch())
		}
		rcost, err := best(rounds, func() (time.Duration, error) { return rl.RawLaunchCost(rs, burst, burst) })
		if err != nil {
			return err
		}
		host.RefName = "raw " + s.driverFn(func(c *gpu.Calls) *gpu.Fn { return &c.GraphLaunch })
		host.RefValue, host.Ratio = us(rcost), float64(cost)/float64(rcost)
	} else {
		host.Note += "; no raw-driver reference on the CPU"
	}
	s.add(host)
	return nil
}

// rawCapture captures what work enqueues on a new stream of the reference
// device and instantiates it; both are released when the suite ends.
func (s *suite) rawCapture(work func(rs backend.Stream) error) (backend.GraphExec, backend.Stream, error) {
	c, ok := s.raw.(backend.Capturer)
	if !ok {
		return nil, nil, fmt.Errorf("the %s backend has no graphs", s.p.Arch())
	}
	rs, err := s.raw.NewStream(0)
	if err != nil {
		return nil, nil, err
	}
	s.cleanup(rs.Close)
	if err := c.BeginCapture(rs); err != nil {
		return nil, nil, err
	}
	werr := work(rs)
	g, err := c.EndCapture(rs)
	if err = errors.Join(werr, err); err != nil {
		if g != nil {
			g.Close()
		}
		return nil, nil, err
	}
	defer g.Close()
	x, err := g.Instantiate()
	if err != nil {
		return nil, nil, err
	}
	s.cleanup(x.Close)
	return x, rs, nil
}

// rawModule compiles kernel name of benchSrc on the reference device.
func (s *suite) rawModule(name string) (backend.Module, *lower.Plan, error) {
	k, err := benchIR(name)
	if err != nil {
		return nil, nil, err
	}
	plan, err := lower.Lower(k)
	if err != nil {
		return nil, nil, err
	}
	mod, err := s.raw.Compile(plan, backend.CompileOptions{})
	if err != nil {
		return nil, nil, err
	}
	s.cleanup(mod.Close)
	return mod, plan, nil
}

// rawBuffer allocates bytes on the reference device for the suite.
func (s *suite) rawBuffer(bytes int) (backend.Buffer, error) {
	b, err := s.raw.Alloc(bytes)
	if err == nil {
		s.cleanup(b.Close)
	}
	return b, err
}

// rawChain is the chain's graph, captured through the backend.
func (s *suite) rawChain() (backend.GraphExec, backend.Stream, error) {
	mod, plan, err := s.rawModule("saxpy")
	if err != nil {
		return nil, nil, err
	}
	bx, err := s.rawBuffer(4 * graphN)
	if err != nil {
		return nil, nil, err
	}
	by, err := s.rawBuffer(4 * graphN)
	if err != nil {
		return nil, nil, err
	}
	shape := [4]int{graphN, 1, 1, 1}
	args := &backend.Args{
		Scalars: []uint64{uint64(math.Float32bits(0.5)), 0, 0, graphN},
		Arrays:  []backend.ArrayArg{{}, {Buf: bx, Shape: shape}, {Buf: by, Shape: shape}, {}},
	}
	return s.rawCapture(func(rs backend.Stream) error {
		for range graphChain {
			if err := rawLaunch(mod, plan, args, rs, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// rawGroups is the stream-parallel kernel's graph, captured through the
// backend with the fork and join package qd makes.
func (s *suite) rawGroups() (backend.GraphExec, backend.Stream, error) {
	mod, plan, err := s.rawModule("spin4_groups")
	if err != nil {
		return nil, nil, err
	}
	state, err := s.rawBuffer(8 * 4)
	if err != nil {
		return nil, nil, err
	}
	args := &backend.Args{Scalars: []uint64{0, spIters}, Arrays: []backend.ArrayArg{{Buf: state, Shape: [4]int{4, 1, 1, 1}}, {}}}
	groups := make([]backend.Stream, plan.Groups)
	for g := 1; g < len(groups); g++ {
		if groups[g], err = s.raw.NewStream(0); err != nil {
			return nil, nil, err
		}
		s.cleanup(groups[g].Close)
	}
	events := make([]backend.Event, plan.Groups)
	for i := range events {
		if events[i], err = s.raw.NewEvent(false); err != nil {
			return nil, nil, err
		}
		s.cleanup(events[i].Close)
	}
	return s.rawCapture(func(rs backend.Stream) error {
		groups[0] = rs
		return rawLaunch(mod, plan, args, rs, &fork{groups, events})
	})
}

// fork is the streams of a stream-parallel launch (the launch stream
// first) and an event per stream for the fork and the joins.
type fork struct {
	streams []backend.Stream
	events  []backend.Event
}

// rawLaunch launches every task of plan on s, each group's on its stream
// of f (forked from s and joined back) when f is set.
func rawLaunch(mod backend.Module, plan *lower.Plan, args *backend.Args, s backend.Stream, f *fork) error {
	l, err := mod.Begin(s, args)
	if err != nil {
		return err
	}
	run := func() error {
		if f != nil {
			if err := f.events[0].Record(s); err != nil {
				return err
			}
			for _, gs := range f.streams[1:] {
				if err := gs.WaitEvent(f.events[0]); err != nil {
					return err
				}
			}
		}
		for i, t := range plan.Tasks {
			on := s
			if f != nil && t.Group > 1 {
				on = f.streams[t.Group-1]
			}
			if err := l.Run(i, on); err != nil {
				return err
			}
		}
		if f != nil {
			for g, gs := range f.streams[1:] {
				if err := f.events[g+1].Record(gs); err != nil {
					return err
				}
				if err := s.WaitEvent(f.events[g+1]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return errors.Join(run(), l.End(s))
}
