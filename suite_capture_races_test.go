package qd

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Races between operations and captures on the same stream, on the CPU
// and over the fake driver (docs/semantics.md#graphs: an operation is
// wholly inside a capture or wholly outside it). Each test repeats a race
// that hit a few times in a thousand runs before the stream's gate held a
// launch's capture state steady through its enqueue (gate.go), so that it
// fails on that code in every run; the checks are exact, never timed.

const captureRaceSrc = `package k

//qd:kernel
func bump(x, y []int32) {
	for i := range 1 {
		x[i] += 1
		y[i] += 1
	}
}
`

// raceRounds is how many times a race test repeats its race.
func raceRounds() int {
	if testing.Short() {
		return 300
	}
	return 2000
}

// onCPUAndFake runs f on a Program of every arch present (the CPU, and a
// GPU where there is one) and on a Program over the fake driver (the GPU
// runtime's paths everywhere), and checks, over the fake, that the
// driver saw no misuse (such as a kernel argument in freed memory) and
// that nothing is left once the Program closes.
func onCPUAndFake(t *testing.T, f func(t *testing.T, p *Program)) {
	forEachArch(t, f) // the CPU, and a GPU where there is one
	t.Run("fake", func(t *testing.T) {
		e, fake := openFake(t)
		misuses := len(fake.Misuses())
		f(t, e.p)
		check(t, e.p.Close())
		for _, m := range fake.Misuses()[misuses:] {
			t.Errorf("driver misuse: %s", m)
		}
		if live := fake.Live(); live != (fakedriver.Live{}) {
			t.Errorf("live after Program.Close: %v", live)
		}
	})
}

// TestLaunchRacingCapture: a goroutine launches on s while another
// captures s with an empty function. A launch that landed in the graph
// must be held by it: after its array is closed, a replay either fails
// with ErrClosed or replays nothing of it (y does not move).
func TestLaunchRacingCapture(t *testing.T) {
	onCPUAndFake(t, func(t *testing.T, p *Program) {
		bump := must(must(Compile(p, captureRaceSrc))(t).Kernel("bump"))(t)
		s := must(p.NewStream())(t)
		y := must(NewNdarray[int32](p, 1))(t)
		runs := !isFake(p)
		for range raceRounds() {
			x := must(NewNdarray[int32](p, 1))(t)
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					if err := bump.LaunchOn(s, x, y); err != nil {
						t.Errorf("launch racing a capture: %v", err)
						return
					}
				}
			}()
			g, err := s.Capture(func() error { return nil })
			stop.Store(true)
			wg.Wait()
			check(t, err)
			check(t, s.Synchronize())
			before := must(y.ToSlice())(t)[0]
			check(t, x.Close())
			if err := g.LaunchOn(s); err != nil {
				wantErr(t, err, ErrClosed)
			} else if runs {
				check(t, s.Synchronize())
				if after := must(y.ToSlice())(t)[0]; after != before {
					t.Fatalf("the graph of an empty capture, whose arrays are all open, replayed a launch (y %d → %d): a launch racing the capture was recorded by the backend but not by qd", before, after)
				}
			}
			check(t, g.Close())
			if t.Failed() {
				return
			}
		}
	})
}

// isFake reports whether p runs over the fake driver, which does not run
// kernels.
func isFake(p *Program) bool { return p.Arch() == CUDA && p.dev.Info().Name == "qd fake GPU" }

// TestCloseRacingCapture: the Close of an array made by NewNdarrayOn on s
// races a capture beginning on s. The Close must succeed and leave the
// capture alone, and the memory must be freed (the fake's live count,
// checked by onCPUAndFake).
func TestCloseRacingCapture(t *testing.T) {
	onCPUAndFake(t, func(t *testing.T, p *Program) {
		bump := must(must(Compile(p, captureRaceSrc))(t).Kernel("bump"))(t)
		s := must(p.NewStream())(t)
		y := must(NewNdarray[int32](p, 1))(t)
		for range raceRounds() {
			x := must(NewNdarrayOn[int32](s, 1))(t)
			check(t, bump.LaunchOn(s, x, y))
			closed := make(chan error, 1)
			go func() { closed <- x.Close() }()
			g, err := s.Capture(func() error { return nil })
			if err := <-closed; err != nil {
				t.Fatalf("Close of an array racing a capture on its stream: %v", err)
			}
			if err != nil {
				t.Fatalf("a capture racing the Close of an array: %v", err)
			}
			check(t, g.Close())
		}
		check(t, s.Synchronize())
	})
}

// TestHostCopyRacingClose: host reads and writes of an array race its
// Close: each succeeds or fails with ErrClosed, and none touches freed
// memory (the fake reports that as a misuse).
func TestHostCopyRacingClose(t *testing.T) {
	onCPUAndFake(t, func(t *testing.T, p *Program) {
		buf := make([]float32, 64)
		ops := []struct {
			name string
			op   func(x *Ndarray[float32]) error
		}{
			{"ToSlice", func(x *Ndarray[float32]) error { _, err := x.ToSlice(); return err }},
			{"CopyToHost", func(x *Ndarray[float32]) error { return x.CopyToHost(buf) }},
			{"CopyFromHost", func(x *Ndarray[float32]) error { return x.CopyFromHost(make([]float32, 64)) }},
		}
		for _, o := range ops {
			for range raceRounds() / 4 {
				x := must(NewNdarray[float32](p, 64))(t)
				done := make(chan error, 1)
				go func() { done <- o.op(x) }()
				check(t, x.Close())
				if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
					t.Fatalf("%s racing Close: %v, want nil or ErrClosed", o.name, err)
				}
			}
		}
	})
}

// TestStartTraceBeforeClose: a trace replaced just before Program.Close
// leaves nothing behind (its timing events were closed by a goroutine
// that ran after the device was gone).
func TestStartTraceBeforeClose(t *testing.T) {
	for range 200 {
		e, fake := openFake(t)
		check(t, e.p.StartTrace())
		check(t, e.p.StartTrace()) // replaces the first
		check(t, e.p.Close())
		if live := fake.Live(); live != (fakedriver.Live{}) {
			t.Fatalf("live after Program.Close: %v", live)
		}
	}
}

// TestHostCallsDoNotWaitForRunningWork: calls documented as enqueueing and
// returning must not wait for unrelated work. A kernel on s1 waits for a
// flag (a bounded spin); each call below runs meanwhile, and only after it
// returns does a copy on s2 raise the flag. Had the call waited for the
// spinning kernel, the kernel would have given up first (out[0] == 2).
// Compile is a host call that a GPU driver makes wait: loading a module
// waits for the device's running work (measured on an H200, docs/cuda.md),
// which is why qd loads its own kernels when the Program starts and every
// function at Compile, so that no launch loads one.
func TestHostCallsDoNotWaitForRunningWork(t *testing.T) {
	const src = `package k

//qd:kernel
func triple(x []float32) {
	for i := range len(x) {
		x[i] = 3 * x[i]
	}
}
`
	var triple *Kernel // compiled before the spinner starts, launched first while it spins
	cases := []struct {
		name string
		call func(t *testing.T, p *Program, s *Stream, x *Ndarray[float32]) error
	}{
		{"first launch", func(t *testing.T, p *Program, s *Stream, x *Ndarray[float32]) error { return triple.LaunchOn(s, x) }},
		{"first FillOn", func(t *testing.T, p *Program, s *Stream, x *Ndarray[float32]) error { return x.FillOn(s, 7) }},
		{"NewNdarrayOn", func(t *testing.T, p *Program, s *Stream, x *Ndarray[float32]) error {
			return closeMade(NewNdarrayOn[float32](s, 64))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachArch(t, func(t *testing.T, p *Program) {
				needs(t, p, needConcurrentStreams)
				skipFlagCopyRace(t, p)
				wait := must(buildKernel(p, suitekernels.WaitFlag()))(t)
				flag := must(NewNdarray[int32](p, 1))(t)
				out := must(NewNdarray[int32](p, 1))(t)
				x := must(NewNdarray[float32](p, 64))(t)
				one := must(NewHostArray[int32](p, 1))(t)
				must(one.Data())(t)[0] = 1
				s1, s2, s3 := must(p.NewStream())(t), must(p.NewStream())(t), must(p.NewStream())(t)
				triple = must(must(Compile(p, src))(t).Kernel("triple"))(t)
				check(t, p.Synchronize())
				// A bound far beyond what the call takes (a module load
				// takes milliseconds), so that only a call that waits for
				// the spinning kernel lets it give up first.
				check(t, wait.LaunchOn(s1, flag, out, 20*spinBound(p)))
				start := time.Now()
				check(t, c.call(t, p, s3, x))
				took := time.Since(start)
				check(t, flag.CopyFromHostOn(s2, one))
				t.Logf("%s took %v beside the spinning kernel", c.name, took)
				if got := must(out.ToSlice())(t)[0]; got != 1 {
					t.Fatalf("%s waited for a kernel running on another stream (the kernel gave up waiting: %d)", c.name, got)
				}
			})
		})
	}
}

// TestFirstFillLoadsNothing: over the fake driver, a Program's first
// FillOn of any element size loads no module (1-, 2- and 4-byte elements
// are memsets, and the 8-byte fill kernel was loaded when the Program
// started), so it cannot wait for a driver's module load.
func TestFirstFillLoadsNothing(t *testing.T) {
	e, fake := openFake(t)
	before := fake.Count(fakedriver.Load)
	b8 := newNdarray[uint8](t, e.p, 5)
	b16 := newNdarray[int16](t, e.p, 5)
	b64 := newNdarray[float64](t, e.p, 5)
	check(t, errors.Join(e.x.FillOn(e.s, 7), b8.FillOn(e.s, 1), b16.FillOn(e.s, 2), b64.FillOn(e.s, 3)))
	check(t, e.s.Synchronize())
	if n := fake.Count(fakedriver.Load) - before; n != 0 {
		t.Fatalf("the first FillOns loaded %d modules", n)
	}
	// The fake runs memsets (not kernels).
	allEqual(t, "u8 fill", toSlice(t, b8), 1)
	allEqual(t, "i16 fill", toSlice(t, b16), 2)
	if n := e.p.fills.loaded(); n != 1 {
		t.Errorf("the Program loaded %d fill kernels, want 1 (8-byte elements)", n)
	}
}
