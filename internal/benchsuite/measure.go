package benchsuite

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/codegen/ptx"
	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/pool"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

const gpuOnly = "GPU only"

// launch: the host cost of one LaunchOn of a 4-argument kernel on an
// explicit stream, against cuLaunchKernel of the same PTX through the same
// bindings (cuda.RawLaunchCost), and qd's allocations per launch.
func (s *suite) launch() error {
	p := s.p
	k, err := benchKernel(p, "saxpy")
	if err != nil {
		return err
	}
	defer k.Close()
	const n = 32
	x, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	defer x.Close()
	y, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	defer y.Close()
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	// Bursts of syncEvery launches, qd's and the reference's in turn, and
	// the fastest burst of each: on a shared host, noise only ever adds
	// time, and alternating bursts gives both sides the same machine.
	rounds := s.pick(8, 80, 80)
	var launchErr error
	burst := func() (time.Duration, error) {
		t0 := time.Now()
		for range syncEvery {
			// Constants boxed into any cost no allocation.
			if err := k.LaunchOn(st, float32(2), x, y, int64(n)); err != nil {
				launchErr = err
			}
		}
		d := time.Since(t0)
		if err := st.Synchronize(); err != nil {
			return 0, err
		}
		return d / syncEvery, launchErr
	}
	// locked is a burst with the calling goroutine locked to its OS thread,
	// as the raw reference runs: the difference shows what moving between
	// threads costs the driver.
	locked := func() (time.Duration, error) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		return burst()
	}
	for range 8 { // warm: pools, the driver's JIT
		if _, err := burst(); err != nil {
			return err
		}
	}
	row := Row{Name: "launch host cost (LaunchOn, 4 args, explicit stream)", Unit: "µs",
		Note: fmt.Sprintf("mean per launch of the fastest of %d bursts of %d, qd's and the reference's bursts in turn", rounds, syncEvery)}
	lockedRow := Row{Name: "launch host cost, caller locked to its thread", Unit: "µs", Status: Info,
		Note: "the same with runtime.LockOSThread around each burst"}
	var cost, costLocked, raw time.Duration
	var pairs []float64 // qd's burst over the reference's right after it, per round
	var rawRun func() (time.Duration, error)
	if s.gpu {
		if rawRun, err = s.rawLaunch(n, syncEvery); err != nil {
			return err
		}
	}
	for r := range rounds {
		c, err := burst()
		if err != nil {
			return err
		}
		cl, err := locked()
		if err != nil {
			return err
		}
		if r == 0 || c < cost {
			cost = c
		}
		if r == 0 || cl < costLocked {
			costLocked = cl
		}
		if rawRun != nil {
			rd, err := rawRun()
			if err != nil {
				return err
			}
			if r == 0 || rd < raw {
				raw = rd
			}
			pairs = append(pairs, float64(c)/float64(rd))
		}
	}
	row.Value, lockedRow.Value = us(cost), us(costLocked)
	if s.gpu {
		name := "raw " + s.driverFn(func(c *gpu.Calls) *gpu.Fn { return &c.LaunchKernel })
		row.RefName, row.RefValue, row.Ratio = name, us(raw), float64(cost)/float64(raw)
		lockedRow.RefName, lockedRow.RefValue, lockedRow.Ratio = name, us(raw), float64(costLocked)/float64(raw)
		barLE(&row, 1.15)
	} else {
		row.Status, row.Note = Info, row.Note+"; no raw-driver reference on the CPU"
	}
	s.add(row)
	s.add(lockedRow)
	if len(pairs) > 0 {
		// The bar's figure compares the fastest bursts of each side, which
		// a single lucky burst moves; the median of adjacent pairs is the
		// typical ratio, for information.
		slices.Sort(pairs)
		s.add(Row{Name: "launch host cost, median of paired bursts", Unit: "ratio", Status: Info,
			Value: pairs[len(pairs)/2], Ratio: pairs[len(pairs)/2],
			Note: fmt.Sprintf("qd's burst over the reference's burst right after it, median of %d rounds (quartiles %.3f, %.3f)", len(pairs), pairs[len(pairs)/4], pairs[3*len(pairs)/4])})
	}

	var m0, m1 runtime.MemStats
	const allocBursts = 40
	runtime.ReadMemStats(&m0)
	for range allocBursts {
		if _, err := burst(); err != nil {
			return err
		}
	}
	runtime.ReadMemStats(&m1)
	allocs := Row{Name: "launch allocations", Value: float64(m1.Mallocs-m0.Mallocs) / float64(allocBursts*syncEvery), Unit: "allocs/launch",
		Note: "whole process during the launch loop (includes the stream's own work)"}
	allocs.Ratio = allocs.Value
	barLE(&allocs, 0.01)
	allocs.Ratio = 0
	s.add(allocs)
	return nil
}

// rawLaunch prepares the reference launch on the raw device handle and
// returns a function that measures it once (the mean over iters launches).
// What it prepared is released when the suite ends.
func (s *suite) rawLaunch(n, iters int) (func() (time.Duration, error), error) {
	k, err := benchIR("saxpy")
	if err != nil {
		return nil, err
	}
	plan, err := lower.Lower(k)
	if err != nil {
		return nil, err
	}
	mod, err := s.raw.Compile(plan, backend.CompileOptions{})
	if err != nil {
		return nil, err
	}
	s.cleanup(mod.Close)
	bx, err := s.raw.Alloc(4 * n)
	if err != nil {
		return nil, err
	}
	s.cleanup(bx.Close)
	by, err := s.raw.Alloc(4 * n)
	if err != nil {
		return nil, err
	}
	s.cleanup(by.Close)
	rs, err := s.raw.NewStream(0)
	if err != nil {
		return nil, err
	}
	s.cleanup(rs.Close)
	shape := [4]int{n, 1, 1, 1}
	args := &backend.Args{
		Scalars: []uint64{uint64(math.Float32bits(2)), 0, 0, uint64(n)},
		Arrays:  []backend.ArrayArg{{}, {Buf: bx, Shape: shape}, {Buf: by, Shape: shape}, {}},
	}
	rl, ok := mod.(backend.RawLauncher)
	if !ok {
		return nil, fmt.Errorf("the %s backend has no raw launch reference", s.p.Arch())
	}
	if _, err := rl.RawLaunchCost(args, rs, syncEvery, syncEvery); err != nil {
		return nil, err
	}
	return func() (time.Duration, error) { return rl.RawLaunchCost(args, rs, iters, syncEvery) }, nil
}

// spinTarget is how long one latency-bound kernel should run: long against
// the host cost of K launches (32 × ~3 µs), so that the speedups measure
// the GPU's concurrency.
func (s *suite) spinTarget() time.Duration {
	if s.opt.Quick {
		return 200 * time.Microsecond
	}
	return 4 * time.Millisecond
}

// calibrate finds the iteration count of spinIR that runs for about
// spinTarget on the device.
func (s *suite) calibrate(k *qd.Kernel, state *qd.Ndarray[int64], st *qd.Stream) (int64, error) {
	iters := int64(1 << 14)
	for {
		d, err := s.deviceTime(st, 1, func() error { return k.LaunchOn(st, state, int64(0), iters) })
		if err != nil {
			return 0, err
		}
		if d >= s.spinTarget()/4 || iters >= 1<<40 {
			per := float64(d) / float64(iters)
			return max(int64(float64(s.spinTarget())/per), 1), nil
		}
		iters *= 8
	}
}

// deviceTime is the mean device time of reps runs of launch on st, by
// timing events.
func (s *suite) deviceTime(st *qd.Stream, reps int, launch func() error) (time.Duration, error) {
	e0, err := s.p.NewEvent(qd.WithTiming())
	if err != nil {
		return 0, err
	}
	defer e0.Close()
	e1, err := s.p.NewEvent(qd.WithTiming())
	if err != nil {
		return 0, err
	}
	defer e1.Close()
	if err := e0.Record(st); err != nil {
		return 0, err
	}
	for range reps {
		if err := launch(); err != nil {
			return 0, err
		}
	}
	if err := e1.Record(st); err != nil {
		return 0, err
	}
	if err := e1.Synchronize(); err != nil {
		return 0, err
	}
	d, err := qd.Elapsed(e0, e1)
	return d / time.Duration(reps), err
}

// kStreams: K latency-bound kernels on K streams against the same K on one
// stream; bar: speedup ≥ 0.9 × K.
func (s *suite) kStreams() error {
	ks := []int{2, 4, 8, 16, 32}
	if !s.gpu {
		for _, k := range ks {
			s.skip(fmt.Sprintf("K=%d streams speedup", k), gpuOnly+" (the CPU runs K streams on its cores)")
		}
		return nil
	}
	p := s.p
	k, err := benchKernel(p, "spin")
	if err != nil {
		return err
	}
	defer k.Close()
	state, err := qd.NewNdarray[int64](p, 32)
	if err != nil {
		return err
	}
	defer state.Close()
	streams := make([]*qd.Stream, 32)
	for i := range streams {
		if streams[i], err = p.NewStream(); err != nil {
			return err
		}
		defer streams[i].Close()
	}
	iters, err := s.calibrate(k, state, streams[0])
	if err != nil {
		return err
	}
	run := func(kk int, spread bool) (time.Duration, error) {
		t0 := time.Now()
		for i := range kk {
			st := streams[0]
			if spread {
				st = streams[i]
			}
			if err := k.LaunchOn(st, state, int64(i), iters); err != nil {
				return 0, err
			}
		}
		for i := range kk {
			if err := streams[i].Synchronize(); err != nil {
				return 0, err
			}
		}
		return time.Since(t0), nil
	}
	for _, kk := range ks {
		one, err := best(3, func() (time.Duration, error) { return run(kk, false) })
		if err != nil {
			return err
		}
		many, err := best(3, func() (time.Duration, error) { return run(kk, true) })
		if err != nil {
			return err
		}
		sp := float64(one) / float64(many)
		r := Row{Name: fmt.Sprintf("K=%d streams speedup", kk), Value: sp, Unit: "×", RefName: "ideal", RefValue: float64(kk),
			Ratio: sp / float64(kk), Note: fmt.Sprintf("1 stream %.2f ms, %d streams %.2f ms; kernel ≈ %v", ms(one), kk, ms(many), s.spinTarget())}
		barGE(&r, 0.9)
		s.add(r)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// groups: a stream-parallel kernel of G groups of latency-bound loops
// against the same loops without groups; bar: speedup ≥ 0.9 × G.
func (s *suite) groups() error {
	gs := []int{2, 4, 8}
	if !s.gpu {
		for _, g := range gs {
			s.skip(fmt.Sprintf("G=%d stream-parallel groups speedup", g), gpuOnly)
		}
		return nil
	}
	p := s.p
	cal, err := benchKernel(p, "spin")
	if err != nil {
		return err
	}
	defer cal.Close()
	state, err := qd.NewNdarray[int64](p, 8)
	if err != nil {
		return err
	}
	defer state.Close()
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	iters, err := s.calibrate(cal, state, st)
	if err != nil {
		return err
	}
	for _, g := range gs {
		plain, err := benchKernel(p, fmt.Sprintf("spin%d", g))
		if err != nil {
			return err
		}
		grouped, err := benchKernel(p, fmt.Sprintf("spin%d_groups", g))
		if err != nil {
			plain.Close()
			return err
		}
		run := func(k *qd.Kernel) func() (time.Duration, error) {
			return func() (time.Duration, error) {
				t0 := time.Now()
				if err := k.LaunchOn(st, state, iters); err != nil {
					return 0, err
				}
				err := st.Synchronize()
				return time.Since(t0), err
			}
		}
		if _, err := run(grouped)(); err != nil { // warm the stream pool
			return err
		}
		one, err := best(3, run(plain))
		if err != nil {
			return err
		}
		many, err := best(3, run(grouped))
		if err != nil {
			return err
		}
		plain.Close()
		grouped.Close()
		sp := float64(one) / float64(many)
		r := Row{Name: fmt.Sprintf("G=%d stream-parallel groups speedup", g), Value: sp, Unit: "×", RefName: "ideal", RefValue: float64(g),
			Ratio: sp / float64(g), Note: fmt.Sprintf("no groups %.2f ms, %d groups %.2f ms", ms(one), g, ms(many))}
		barGE(&r, 0.9)
		s.add(r)
	}
	return nil
}

// copyBandwidth is the device-to-device copy bandwidth (bytes read plus
// bytes written per second) of copying bytes, measured once per run: the
// roofline the memory-bound rows are held against. On the CPU it is Go's
// copy (memmove) on one core.
func (s *suite) copyBandwidth(bytes int) (float64, string, error) {
	if s.copyB > 0 {
		return s.copyB, s.copyName(), nil
	}
	reps := s.pick(3, 5, 20)
	var d time.Duration
	if s.gpu {
		src, err := s.raw.Alloc(bytes)
		if err != nil {
			return 0, "", err
		}
		defer src.Close()
		dst, err := s.raw.Alloc(bytes)
		if err != nil {
			return 0, "", err
		}
		defer dst.Close()
		rs, err := s.raw.NewStream(0)
		if err != nil {
			return 0, "", err
		}
		defer rs.Close()
		per, err := rawTime(s.raw, rs, reps, func() error { return dst.CopyFrom(rs, src, bytes) })
		if err != nil {
			return 0, "", err
		}
		d = per * time.Duration(reps)
	} else {
		src := make([]byte, bytes)
		dst := make([]byte, bytes)
		copy(dst, src)
		t0 := time.Now()
		for range reps {
			copy(dst, src)
		}
		d = time.Since(t0)
	}
	s.copyB = 2 * float64(bytes) * float64(reps) / d.Seconds()
	return s.copyB, s.copyName(), nil
}

// driverFn names the driver function pick selects, for reference rows.
func (s *suite) driverFn(pick func(*gpu.Calls) *gpu.Fn) string {
	if d, ok := s.raw.(*gpu.Device); ok {
		return pick(d.Driver().Calls()).Name
	}
	return "driver"
}

func (s *suite) copyName() string {
	if s.gpu {
		return s.driverFn(func(c *gpu.Calls) *gpu.Fn { return &c.CopyDtoDAsync })
	}
	return "Go copy, 1 core"
}

// memSize is the element count of the memory-bound rows: 2^28 float32 on
// the GPU (1 GiB per array).
func (s *suite) memSize() int { return s.pick(1<<20, 1<<24, 1<<28) }

// timeKernel is the mean time of reps launches by launch: device time on a
// GPU, wall clock with a final synchronization on the CPU.
func (s *suite) timeKernel(st *qd.Stream, reps int, launch func() error) (time.Duration, error) {
	if err := launch(); err != nil { // warm
		return 0, err
	}
	if err := st.Synchronize(); err != nil {
		return 0, err
	}
	if s.gpu {
		return s.deviceTime(st, reps, launch)
	}
	return best(3, func() (time.Duration, error) {
		t0 := time.Now()
		for range reps {
			if err := launch(); err != nil {
				return 0, err
			}
		}
		err := st.Synchronize()
		return time.Since(t0) / time.Duration(reps), err
	})
}

// saxpy over 2^28 float32 against a device-to-device copy of the same
// bytes; bar: ≥ 90 % of the copy's bandwidth.
func (s *suite) saxpy() error {
	n := s.memSize()
	d, err := saxpyTime(s, n)
	if err != nil {
		return err
	}
	bw := 12 * float64(n) / d.Seconds()
	ref, refName, err := s.copyBandwidth(4 * n)
	if err != nil {
		return err
	}
	r := Row{Name: fmt.Sprintf("saxpy bandwidth (2^%d float32)", log2(n)), Value: bw / 1e9, Unit: "GB/s",
		RefName: refName, RefValue: ref / 1e9, Ratio: bw / ref,
		Note: fmt.Sprintf("12 bytes per element in %.3f ms; copy counts bytes read + written", ms(d))}
	if s.gpu {
		barGE(&r, 0.9)
	} else {
		r.Status = Info
		r.Note += "; the CPU kernel uses every core, the copy one"
	}
	s.add(r)
	if s.gpu {
		return s.saxpyChecked(n, d)
	}
	return nil
}

// saxpyTime is the device time of one saxpy over n elements on s's Program.
func saxpyTime(s *suite, n int) (time.Duration, error) {
	p := s.p
	k, err := benchKernel(p, "saxpy")
	if err != nil {
		return 0, err
	}
	defer k.Close()
	x, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return 0, err
	}
	defer x.Close()
	y, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return 0, err
	}
	defer y.Close()
	st, err := p.NewStream()
	if err != nil {
		return 0, err
	}
	defer st.Close()
	return s.timeKernel(st, s.pick(3, 5, 20), func() error { return k.LaunchOn(st, float32(2), x, y, int64(n)) })
}

// saxpyChecked: the same saxpy with qd.WithDebug's index checks, for
// information: what checking every index costs a bandwidth-bound kernel.
func (s *suite) saxpyChecked(n int, plain time.Duration) error {
	q, err := qd.Init(qd.WithArch(s.p.Arch()), qd.WithDebug())
	if err != nil {
		return err
	}
	defer q.Close()
	on := *s // timing events come from the Program that runs the kernel
	on.p = q
	d, err := saxpyTime(&on, n)
	if err != nil {
		return err
	}
	s.add(Row{Name: fmt.Sprintf("saxpy with WithDebug (2^%d float32)", log2(n)), Value: ms(d), Unit: "ms",
		RefName: "saxpy without", RefValue: ms(plain), Ratio: plain.Seconds() / d.Seconds(), Status: Info,
		Note: "every index checked, scalar loads and stores"})
	return nil
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
}

// reduction: the sum of 2^28 elements written as qd.AtomicAdd(&out[0],
// x[i]) (a reduction), in float32, float64 and int32, each against its
// byte floor (reading the input once at copy bandwidth); bar ≥ 0.85.
func (s *suite) reduction() error {
	for _, t := range []ir.Type{ir.F32, ir.F64, ir.I32} {
		var err error
		switch t {
		case ir.F32:
			err = reduceRow[float32](s, t)
		case ir.F64:
			err = reduceRow[float64](s, t)
		case ir.I32:
			err = reduceRow[int32](s, t)
		}
		if err != nil {
			s.add(Row{Name: fmt.Sprintf("reduction (sum of %v)", t), Status: Fail, Note: "error: " + err.Error()})
		}
	}
	return nil
}

// goName names the element types of the reduction rows as Go does.
var goName = map[ir.Type]string{ir.F32: "float32", ir.F64: "float64", ir.I32: "int32"}

func reduceRow[T float32 | float64 | int32](s *suite, t ir.Type) error {
	p := s.p
	n := s.memSize()
	fill, err := benchKernel(p, "fill_"+goName[t])
	if err != nil {
		return err
	}
	defer fill.Close()
	sum, err := benchKernel(p, "sum_"+goName[t])
	if err != nil {
		return err
	}
	defer sum.Close()
	x, err := qd.NewNdarray[T](p, n)
	if err != nil {
		return err
	}
	defer x.Close()
	out, err := qd.NewNdarray[T](p, 1)
	if err != nil {
		return err
	}
	defer out.Close()
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := fill.LaunchOn(st, x, T(1)); err != nil {
		return err
	}
	reps := s.pick(3, 5, 20)
	d, err := s.timeKernel(st, reps, func() error { return sum.LaunchOn(st, x, out) })
	if err != nil {
		return err
	}
	// One run from zero: a sum of n ones (exact in int32 and float64; in
	// float32 the block partials are, and their sum is within rounding).
	if err := out.CopyFromHost([]T{0}); err != nil {
		return err
	}
	if err := sum.LaunchOn(st, x, out); err != nil {
		return err
	}
	got, err := out.ToSlice()
	if err != nil {
		return err
	}
	if g := float64(got[0]); math.Abs(g-float64(n)) > 1e-6*float64(n) {
		return fmt.Errorf("sum of %d ones: got %v", n, got[0])
	}
	size := int(unsafe.Sizeof(T(0)))
	ref, refName, err := s.copyBandwidth(size * n)
	if err != nil {
		return err
	}
	floor := time.Duration(float64(size*n) / ref * 1e9)
	r := Row{Name: fmt.Sprintf("reduction (sum of 2^%d %v, qd.AtomicAdd)", log2(n), t), Value: ms(d), Unit: "ms",
		RefName: "byte floor at " + refName, RefValue: ms(floor), Ratio: float64(floor) / float64(d),
		Note: "ratio = floor/time"}
	if s.gpu {
		barGE(&r, 0.85)
	} else {
		r.Status = Info
	}
	s.add(r)
	return nil
}

// stencil: a 2-D 5-point stencil over an n×n float32 grid (2^28 elements on
// the GPU), against its byte floor (read the grid once, write it once).
func (s *suite) stencil() error {
	p := s.p
	side := s.pick(1<<10, 1<<12, 1<<14)
	k, err := benchKernel(p, "stencil5")
	if err != nil {
		return err
	}
	defer k.Close()
	in, err := qd.NewNdarray[float32](p, side, side)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := qd.NewNdarray[float32](p, side, side)
	if err != nil {
		return err
	}
	defer out.Close()
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := s.timeKernel(st, s.pick(3, 5, 20), func() error { return k.LaunchOn(st, in, out) })
	if err != nil {
		return err
	}
	ref, refName, err := s.copyBandwidth(4 * s.memSize())
	if err != nil {
		return err
	}
	bytes := 8 * float64(side) * float64(side)
	floor := time.Duration(bytes / ref * 1e9)
	s.add(Row{Name: fmt.Sprintf("2-D 5-point stencil (%d×%d float32)", side, side), Value: ms(d), Unit: "ms",
		RefName: "byte floor at " + refName, RefValue: ms(floor), Ratio: float64(floor) / float64(d), Status: Info,
		Note: fmt.Sprintf("ratio = floor/time; %.0f GB/s effective", bytes/d.Seconds()/1e9)})
	return nil
}

// pool: one acquire+release of a pooled stream, the internal/pool Get and
// Put that a stream-parallel launch runs per borrowed stream (the pool
// holds pointers to qd's stream records); bar ≤ 0.2 µs.
func (s *suite) pool() error {
	type stream struct{ h uintptr }
	sp := &pool.Pool[*stream]{New: func() (*stream, error) { return new(stream), nil }}
	n := s.pick(100000, 1000000, 1000000)
	d, err := best(5, func() (time.Duration, error) {
		v, err := sp.Get() // the first makes the value
		if err != nil {
			return 0, err
		}
		sp.Put(v)
		t0 := time.Now()
		for range n {
			v, _ := sp.Get()
			sp.Put(v)
		}
		return time.Since(t0) / time.Duration(n), nil
	})
	if err != nil {
		return err
	}
	r := Row{Name: "stream pool acquire+release", Value: ns(d), Unit: "ns", Ratio: us(d),
		Note: fmt.Sprintf("mean of %d, best of 5; creating a stream costs about 3 µs", n)}
	barLE(&r, 0.2)
	r.Bar += " µs"
	r.Ratio = 0
	s.add(r)
	return nil
}

// events: the host cost of e.Record(s1) + s2.WaitEvent(e).
func (s *suite) events() error {
	p := s.p
	e, err := p.NewEvent()
	if err != nil {
		return err
	}
	defer e.Close()
	s1, err := p.NewStream()
	if err != nil {
		return err
	}
	defer s1.Close()
	s2, err := p.NewStream()
	if err != nil {
		return err
	}
	defer s2.Close()
	n := s.pick(2048, 20000, 20000)
	d, err := best(5, func() (time.Duration, error) {
		var total time.Duration
		for done := 0; done < n; done += syncEvery {
			t0 := time.Now()
			for range syncEvery {
				if err := e.Record(s1); err != nil {
					return 0, err
				}
				if err := s2.WaitEvent(e); err != nil {
					return 0, err
				}
			}
			total += time.Since(t0)
			if err := s2.Synchronize(); err != nil {
				return 0, err
			}
		}
		return total / time.Duration(n), nil
	})
	if err != nil {
		return err
	}
	s.add(Row{Name: "event record + stream wait", Value: us(d), Unit: "µs", Status: Info,
		Note: "host cost of e.Record(s1) and s2.WaitEvent(e), best of 5"})
	return nil
}

// ndarrays: NewNdarray (1 MiB, zero-filled) + Close.
func (s *suite) ndarrays() error {
	p := s.p
	n := s.pick(50, 500, 500)
	d, err := best(3, func() (time.Duration, error) {
		t0 := time.Now()
		for range n {
			a, err := qd.NewNdarray[float32](p, 1<<18)
			if err != nil {
				return 0, err
			}
			if err := a.Close(); err != nil {
				return 0, err
			}
		}
		return time.Since(t0) / time.Duration(n), nil
	})
	if err != nil {
		return err
	}
	s.add(Row{Name: "Ndarray alloc+free (1 MiB)", Value: us(d), Unit: "µs", Status: Info,
		Note: "NewNdarray (with its zero fill) + Close, best of 3"})
	return nil
}

// compile: a 20-line kernel from Go source to PTX (parse, type check, IR,
// lowering, PTX generation; before the driver's JIT), bar ≤ 5 ms; and a
// Compile that hits the caches, bar ≤ 20 µs.
func (s *suite) compile() error {
	target, err := ptx.TargetFor(90, 12080)
	if err != nil {
		return err
	}
	src := []byte(suitekernels.Kernel20)
	toPTX := func() (time.Duration, error) {
		t0 := time.Now()
		ks, err := frontend.Parse("step.go", src)
		if err != nil {
			return 0, err
		}
		for _, k := range ks {
			plan, err := lower.Lower(k)
			if err != nil {
				return 0, err
			}
			if _, _, err := ptx.Generate(plan, target, ptx.Options{}); err != nil {
				return 0, err
			}
		}
		return time.Since(t0), nil
	}
	d, err := best(s.pick(5, 20, 20), toPTX)
	if err != nil {
		return err
	}
	r := Row{Name: "compile 20-line kernel to PTX", Value: ms(d), Unit: "ms", Ratio: ms(d),
		Note: "source → IR → PTX (sm_90), no driver JIT, best of 20"}
	barLE(&r, 5)
	r.Bar += " ms"
	r.Ratio = 0
	s.add(r)

	// A cache hit: the same source on the same Program.
	first, err := qd.Compile(s.p, suitekernels.Kernel20, qd.WithFilename("step.go"))
	if err != nil {
		return err
	}
	defer first.Close()
	n := s.pick(200, 2000, 2000)
	mods := make([]*qd.Module, 0, n)
	defer func() {
		for _, m := range mods {
			m.Close()
		}
	}()
	hit, err := best(3, func() (time.Duration, error) {
		for _, m := range mods {
			m.Close()
		}
		mods = mods[:0]
		t0 := time.Now()
		for range n {
			m, err := qd.Compile(s.p, suitekernels.Kernel20, qd.WithFilename("step.go"))
			if err != nil {
				return 0, err
			}
			mods = append(mods, m)
		}
		return time.Since(t0) / time.Duration(n), nil
	})
	if err != nil {
		return err
	}
	r = Row{Name: "compile, cache hit", Value: us(hit), Unit: "µs", Ratio: us(hit),
		Note: "qd.Compile of source already compiled on the Program, best of 3"}
	barLE(&r, 20)
	r.Bar += " µs"
	r.Ratio = 0
	s.add(r)
	return nil
}

// programs: a Program opened and closed again in a process that has one
// open already (the suite's): Init ≤ 50 ms and Close ≤ 20 ms on a GPU,
// best of 5. The first Init of the process, which creates the device's
// context, is the caller's (Options.FirstInit), reported for information.
func (s *suite) programs() error {
	if s.opt.FirstInit > 0 {
		s.add(Row{Name: "Init (first in process)", Value: ms(s.opt.FirstInit), Unit: "ms", Status: Info,
			Note: "qd.Init of the command itself: opens the driver and creates the device context"})
	}
	var bestInit, bestClose time.Duration
	for i := range 5 {
		t0 := time.Now()
		q, err := qd.Init(qd.WithArch(s.p.Arch()))
		di := time.Since(t0)
		if err != nil {
			return err
		}
		t0 = time.Now()
		err = q.Close()
		dc := time.Since(t0)
		if err != nil {
			return err
		}
		if i == 0 || di < bestInit {
			bestInit = di
		}
		if i == 0 || dc < bestClose {
			bestClose = dc
		}
	}
	ri := Row{Name: "Init (second in process)", Value: ms(bestInit), Unit: "ms", Ratio: ms(bestInit) / 50, Note: "best of 5; ratio = time / 50 ms"}
	rc := Row{Name: "Program Close", Value: ms(bestClose), Unit: "ms", Ratio: ms(bestClose) / 20, Note: "best of 5, right after Init; ratio = time / 20 ms"}
	if s.gpu {
		barLE(&ri, 1)
		barLE(&rc, 1)
	} else {
		ri.Status, rc.Status = Info, Info
	}
	s.add(ri)
	s.add(rc)
	return nil
}
