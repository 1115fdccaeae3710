package gpu_test

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/trace"
)

// scenarioWords is the size, in 32-bit words, of the scenario's buffers.
const scenarioWords = 4096

// scenario uses a device the way package qd does: two streams, a trace
// timer, page-locked host memory, a buffer, a buffer in stream order with
// a view of it, three compiled kernels (one with temporaries, one with
// index checks), copies in every direction, a fill, events ordering the
// streams, launches (one traced, one split over both streams as a
// stream-parallel launch is, one checked), then frees in stream order. Like qd, on an error it stops, and it always
// releases what it made. It returns the first error, saying which step
// failed, and any error of the release separately.
type scenario struct {
	fill, temps *lower.Plan
	kernels     bool // the driver runs kernels: check their results
}

// run runs the scenario on d.
func (sc *scenario) run(d *gpu.Device) (err, releaseErr error) {
	var undo []func() error
	defer func() {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			errs = append(errs, undo[i]())
		}
		releaseErr = errors.Join(errs...)
	}()
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	closer := func(c interface{ Close() error }) { undo = append(undo, c.Close) }

	_, greatest := d.PriorityRange()
	var s1, s2 backend.Stream
	if s1, err = d.NewStream(0); err != nil {
		return step("NewStream", err), nil
	}
	closer(s1)
	if s2, err = d.NewStream(greatest); err != nil {
		return step("NewStream (high priority)", err), nil
	}
	closer(s2)
	// Before anything is waited for, as WithTrace starts a trace at Init.
	tt, err := d.NewTraceTimer(trace.NewRecorder("faults", 0))
	if err != nil {
		return step("NewTraceTimer", err), nil
	}
	closer(tt)
	// Work may be left on the streams after an error: wait for it before
	// anything is freed, as qd's Close does.
	undo = append(undo, func() error { return errors.Join(s1.Synchronize(), s2.Synchronize()) })

	const n = scenarioWords * 4
	h, err := d.AllocHost(n)
	if err != nil {
		return step("AllocHost", err), nil
	}
	closer(h)
	buf, err := d.Alloc(n)
	if err != nil {
		return step("Alloc", err), nil
	}
	closer(buf)
	out, err := d.Alloc(4 * 64) // kernel results: 32 words from fill, then a u64 from temps
	if err != nil {
		return step("Alloc (kernel results)", err), nil
	}
	closer(out)
	pooled, err := d.AllocOn(s1, n)
	if err != nil {
		return step("AllocOn", err), nil
	}
	undo = append(undo, func() error { return pooled.FreeOn(s1) }) // a no-op once freed
	view, err := pooled.View(n/2, n/2)
	if err != nil {
		return step("View", err), nil
	}
	fill, err := d.Compile(sc.fill, backend.CompileOptions{})
	if err != nil {
		return step("Compile fill", err), nil
	}
	closer(fill)
	temps, err := d.Compile(sc.temps, backend.CompileOptions{})
	if err != nil {
		return step("Compile temps", err), nil
	}
	closer(temps)
	checked, err := d.Compile(sc.fill, backend.CompileOptions{Debug: true})
	if err != nil {
		return step("Compile fill (checked)", err), nil
	}
	closer(checked)
	var ev, fork, join backend.Event
	for _, e := range []*backend.Event{&ev, &fork, &join} {
		if *e, err = d.NewEvent(false); err != nil {
			return step("NewEvent", err), nil
		}
		closer(*e)
	}

	host := unsafe.Slice((*uint32)(h.Pointer()), scenarioWords)
	for i := range host {
		host[i] = uint32(i)*2654435761 | 1
	}
	if err := buf.CopyFromHost(s1, h.Pointer(), n); err != nil {
		return step("CopyFromHost", err), nil
	}
	if err := sc.tracedFill(tt, fill, s1, out); err != nil {
		return err, nil
	}
	if err := pooled.CopyFrom(s1, buf, n); err != nil {
		return step("CopyFrom", err), nil
	}
	if err := view.(backend.Zeroer).Zero(s1); err != nil {
		return step("Zero (view)", err), nil
	}
	if err := ev.Record(s1); err != nil {
		return step("Record", err), nil
	}
	if err := s2.WaitEvent(ev); err != nil {
		return step("WaitEvent", err), nil
	}
	if err := sc.splitTemps(temps, s2, s1, fork, join, out); err != nil {
		return err, nil
	}
	fillArgs := &backend.Args{Scalars: []uint64{0, 7}, Arrays: []backend.ArrayArg{arr(out, 32)}}
	if err := (&kernel{checked, len(sc.fill.Tasks)}).launch(s2, fillArgs); err != nil {
		return fmt.Errorf("launch fill (checked): %w", err), nil
	}
	// Temporaries again: the free list's block comes back once a query
	// of its event says the launch before is done.
	if err := s1.Synchronize(); err != nil {
		return step("Synchronize", err), nil
	}
	if err := sc.splitTemps(temps, s1, s1, fork, join, out); err != nil {
		return err, nil
	}
	if _, err := s1.Query(); err != nil {
		return step("Query", err), nil
	}
	if err := pooled.CopyToHost(s2, h.Pointer(), n); err != nil {
		return step("CopyToHost", err), nil
	}
	if err := s2.Synchronize(); err != nil {
		return step("Synchronize", err), nil
	}
	for i, v := range host {
		want := uint32(i)*2654435761 | 1
		if i >= scenarioWords/2 {
			want = 0
		}
		if v != want {
			return fmt.Errorf("data: word %d = %#x, want %#x", i, v, want), nil
		}
	}
	if _, err := ev.Query(); err != nil {
		return step("event Query", err), nil
	}
	if err := sc.checkKernels(s2, out); err != nil {
		return err, nil
	}
	if err := tt.Flush(); err != nil {
		return step("trace Flush", err), nil
	}
	if err := view.FreeOn(s2); err != nil {
		return step("FreeOn (view)", err), nil
	}
	return step("FreeOn", pooled.FreeOn(s2)), nil
}

// tracedFill launches fill (p[i] = 7 over the first 32 words of out) on s
// between the marks of the trace timer, as a traced qd launch does.
func (sc *scenario) tracedFill(tt backend.TraceTimer, fill backend.Module, s backend.Stream, out backend.Buffer) error {
	mark, err := tt.Begin(s)
	if err != nil {
		return fmt.Errorf("trace Begin: %w", err)
	}
	args := &backend.Args{Scalars: []uint64{0, 7}, Arrays: []backend.ArrayArg{arr(out, 32)}}
	if err := (&kernel{fill, len(sc.fill.Tasks)}).launch(s, args); err != nil {
		return fmt.Errorf("launch fill: %w", err)
	}
	if err := tt.End(s, mark, trace.Span{Kernel: "fill", Kind: "parallel"}); err != nil {
		return fmt.Errorf("trace End: %w", err)
	}
	return nil
}

// splitTemps launches temps (out[16] as a u64 = 41 through the launch's
// temporaries) with its first task on s and the others on o, forked from s
// and joined back into it with events, as qd runs a stream-parallel
// launch: Begin and End on s, End even after a failed task.
func (sc *scenario) splitTemps(temps backend.Module, s, o backend.Stream, fork, join backend.Event, out backend.Buffer) error {
	res, err := out.View(4*32, 8)
	if err != nil {
		return err
	}
	l, err := temps.Begin(s, &backend.Args{Scalars: []uint64{0, 41}, Arrays: []backend.ArrayArg{arr(res, 1)}})
	if err != nil {
		return fmt.Errorf("Begin temps: %w", err)
	}
	err = l.Run(0, s)
	if err == nil && len(sc.temps.Tasks) > 1 {
		err = fork.Record(s)
		if err == nil {
			err = o.WaitEvent(fork)
		}
		for task := 1; task < len(sc.temps.Tasks) && err == nil; task++ {
			err = l.Run(task, o)
		}
		if err == nil {
			err = join.Record(o)
		}
		if err == nil {
			err = s.WaitEvent(join)
		}
	}
	if err != nil {
		// s cannot be ordered after o: wait on the host, as qd does, so
		// that End frees nothing o still uses.
		o.Synchronize()
		err = fmt.Errorf("launch temps: %w", err)
	}
	return errors.Join(err, l.End(s))
}

// checkKernels checks the kernels' results where kernels run.
func (sc *scenario) checkKernels(s backend.Stream, out backend.Buffer) error {
	if !sc.kernels {
		return nil
	}
	got := make([]uint32, 34)
	if err := out.CopyToHost(s, unsafe.Pointer(&got[0]), 4*34); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	for i, v := range got[:32] {
		if v != 7 {
			return fmt.Errorf("fill: word %d = %d, want 7", i, v)
		}
	}
	if v := uint64(got[32]) | uint64(got[33])<<32; v != 41 {
		return fmt.Errorf("temps: %d, want 41", v)
	}
	return nil
}
