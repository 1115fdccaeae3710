package qd

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

func TestStreamLifecycle(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		s := newStream(t, p)
		if s.Handle() == 0 {
			t.Error("a new stream has handle 0")
		}
		done, err := s.Query()
		if err != nil || !done {
			t.Errorf("Query of an idle stream = %v, %v; want true, nil", done, err)
		}
		check(t, s.Synchronize())
		check(t, s.Close())
		check(t, s.Close()) // idempotent
		wantErr(t, s.Synchronize(), ErrClosed)
		_, err = s.Query()
		wantErr(t, err, ErrClosed)
		wantErr(t, s.SynchronizeContext(context.Background()), ErrClosed)
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, arrayLen)
		wantErr(t, k.LaunchOn(s, x, float32(1)), ErrClosed)
		o := newStream(t, p)
		wantErr(t, o.WaitStream(s), ErrClosed)
		wantErr(t, s.WaitStream(o), ErrClosed)
		e := newEvent(t, p)
		wantErr(t, e.Record(s), ErrClosed)
		wantErr(t, s.WaitEvent(e), ErrClosed)
	})
}

func TestEventLifecycle(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		e := newEvent(t, p)
		// An event never recorded is reached.
		done, err := e.Query()
		if err != nil || !done {
			t.Errorf("Query of an unrecorded event = %v, %v; want true, nil", done, err)
		}
		check(t, e.Synchronize())
		check(t, e.Record(p.DefaultStream()))
		check(t, e.Synchronize())
		check(t, e.Close())
		check(t, e.Close())
		wantErr(t, e.Record(p.DefaultStream()), ErrClosed)
		wantErr(t, e.Synchronize(), ErrClosed)
		_, err = e.Query()
		wantErr(t, err, ErrClosed)
		wantErr(t, p.DefaultStream().WaitEvent(e), ErrClosed)
	})
}

func TestKernelOnStream(t *testing.T) {
	forEachTwin(t, func(t *testing.T, p *Program, kernel func(twin) *Kernel) {
		k := kernel(fillTwin)
		x := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		check(t, k.LaunchOn(s, x, float32(42)))
		check(t, s.Synchronize())
		allEqual(t, "x", toSlice(t, x), 42)
		check(t, s.Close())
	})
}

func TestTwoStreams(t *testing.T) {
	forEachTwin(t, func(t *testing.T, p *Program, kernel func(twin) *Kernel) {
		k := kernel(fillTwin)
		a := newNdarray[float32](t, p, arrayLen)
		b := newNdarray[float32](t, p, arrayLen)
		s1 := newStream(t, p)
		s2 := newStream(t, p)
		check(t, k.LaunchOn(s1, a, float32(1)))
		check(t, k.LaunchOn(s2, b, float32(2)))
		check(t, s1.Synchronize())
		check(t, s2.Synchronize())
		allEqual(t, "a", toSlice(t, a), 1)
		allEqual(t, "b", toSlice(t, b), 2)
	})
}

// TestEventWaits orders work both ways: a stream after the default stream
// and the default stream after a stream, each through an event, with the
// producer slowed down so that a missing wait would show.
func TestEventWaits(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needLongLoops)
		slow := build(t, p, suitekernels.SlowWrite())
		cp := build(t, p, suitekernels.Copy())
		state := newNdarray[int64](t, p, 1)
		s := newStream(t, p)
		e := newEvent(t, p)
		for _, dir := range []string{"stream->default", "default->stream"} {
			t.Run(dir, func(t *testing.T) {
				x := newNdarray[float32](t, p, 64)
				y := newNdarray[float32](t, p, 64)
				producer, consumer := s, p.DefaultStream()
				if dir == "default->stream" {
					producer, consumer = consumer, producer
				}
				check(t, slow.LaunchOn(producer, x, float32(10), state, int64(200000)))
				check(t, e.Record(producer))
				check(t, consumer.WaitEvent(e))
				check(t, cp.LaunchOn(consumer, x, y))
				check(t, consumer.Synchronize())
				// Read y straight from the consumer's results: no extra waits.
				allEqual(t, "y", toSlice(t, y), 10)
			})
		}
	})
}

func TestDefaultStreamKernel(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, arrayLen)
		check(t, k.Launch(x, float32(7)))
		check(t, p.Synchronize())
		allEqual(t, "x", toSlice(t, x), 7)
		wantErr(t, p.DefaultStream().Close(), ErrInvalidArgument)
	})
}

func TestEventSynchronize(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, 64)
		s := newStream(t, p)
		e := newEvent(t, p)
		check(t, k.LaunchOn(s, x, float32(13)))
		check(t, e.Record(s))
		check(t, e.Synchronize())
		if done, err := e.Query(); err != nil || !done {
			t.Fatalf("Query after Synchronize = %v, %v", done, err)
		}
		allEqual(t, "x", toSlice(t, x), 13)
	})
}

// TestQueryAfterWaits: once the host has waited for a stream's work, by
// the event recorded last on it or by Synchronize and a host read (which
// records qd's own marker), Stream.Query says the work is done. A stress
// loop: the CPU backend once let the event complete a few instructions
// before the stream counted it (internal/backend/cpu has the long run).
func TestQueryAfterWaits(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		rounds := 4000
		if testing.Short() {
			rounds = 500
		}
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, 4)
		s := newStream(t, p)
		e := newEvent(t, p)
		got := make([]float32, 4)
		for r := range rounds {
			check(t, k.LaunchOn(s, x, float32(r)))
			if r%2 == 0 {
				check(t, e.Record(s))
				check(t, e.Synchronize())
			} else {
				check(t, s.Synchronize())
				check(t, x.CopyToHost(got))
			}
			if done := must(s.Query())(t); !done {
				t.Fatalf("round %d: Query = false after the host waited for the stream's work", r)
			}
		}
	})
}

func TestNdarrayOnStream(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, arrayLen)
		s := newStream(t, p)
		check(t, k.LaunchOn(s, x, float32(99)))
		// No Synchronize: host access waits for the streams that used x.
		allEqual(t, "x", toSlice(t, x), 99)
	})
}

func TestElapsed(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		slow := build(t, p, suitekernels.SlowWrite())
		x := newNdarray[float32](t, p, 1)
		state := newNdarray[int64](t, p, 1)
		s := newStream(t, p)
		start := newEvent(t, p, WithTiming())
		end := newEvent(t, p, WithTiming())
		plain := newEvent(t, p)
		check(t, start.Record(s))
		check(t, slow.LaunchOn(s, x, float32(1), state, int64(1000)))
		check(t, end.Record(s))
		check(t, plain.Record(s))
		check(t, end.Synchronize())
		d, err := Elapsed(start, end)
		check(t, err)
		if d < 0 {
			t.Errorf("Elapsed = %v, want ≥ 0", d)
		}
		_, err = Elapsed(start, plain)
		wantErr(t, err, ErrInvalidArgument)
	})
}

// TestStreamCloseWaitsForQueuedWork closes a stream right after enqueuing
// a slow kernel and checks the kernel's writes are complete when Close
// returns.
func TestStreamCloseWaitsForQueuedWork(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needLongLoops)
		slow := build(t, p, suitekernels.SlowWrite())
		x := newNdarray[float32](t, p, 16)
		state := newNdarray[int64](t, p, 1)
		s := newStream(t, p)
		for i := range 4 {
			check(t, slow.LaunchOn(s, x, float32(i+1), state, int64(100000)))
		}
		check(t, s.Close())
		wantErr(t, slow.LaunchOn(s, x, float32(0), state, int64(1)), ErrClosed)
		// Read through a raw buffer copy with no waits: Close already waited.
		got := make([]float32, 16)
		check(t, x.CopyToHost(got))
		allEqual(t, "x", got, 4)
	})
}

// TestSynchronizeContext: SynchronizeContext returns the context's error
// when it is done first, and refuses a nil context.
func TestSynchronizeContext(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		slow := build(t, p, suitekernels.SlowWrite())
		x := newNdarray[float32](t, p, 1)
		state := newNdarray[int64](t, p, 1)
		s := newStream(t, p)
		check(t, s.SynchronizeContext(context.Background()))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		wantErr(t, s.SynchronizeContext(ctx), context.Canceled)
		check(t, slow.LaunchOn(s, x, float32(1), state, int64(1000)))
		check(t, s.SynchronizeContext(context.Background()))
		//lint:ignore SA1012 the nil context is the point
		wantErr(t, s.SynchronizeContext(nil), ErrInvalidArgument) //nolint:staticcheck
		wantErr(t, p.SynchronizeContext(nil), ErrInvalidArgument) //nolint:staticcheck
		e := newEvent(t, p)
		wantErr(t, e.SynchronizeContext(nil), ErrInvalidArgument) //nolint:staticcheck
		check(t, e.Record(s))
		check(t, e.SynchronizeContext(context.Background()))
		check(t, p.SynchronizeContext(context.Background()))
	})
}

// TestSynchronizeContextKeepsErrors: a SynchronizeContext that gives up
// while the stream's work is still running must leave that work's error
// for the next Synchronize. The stream holds a kernel that waits for a
// flag, then one that indexes out of range; the wait is given up while
// the first kernel waits (the flag is raised only afterwards), so the
// error can only come later.
func TestSynchronizeContextKeepsErrors(t *testing.T) {
	forEachChecked(t, func(t *testing.T, p *Program) {
		needs(t, p, needConcurrentStreams)
		skipFlagCopyRace(t, p)
		wait := build(t, p, suitekernels.WaitFlag())
		bad := build(t, p, suitekernels.BadGroup())
		flag := newNdarray[int32](t, p, 1)
		out := newNdarray[int32](t, p, 1)
		short := newNdarray[float32](t, p, 4)
		one := newHostArray[int32](t, p, 1)
		hostData(t, one)[0] = 1
		s, s2 := newStream(t, p), newStream(t, p)
		for _, wait1 := range []struct {
			name string
			wait func(ctx context.Context) error
		}{
			{"Stream", s.SynchronizeContext},
			{"Program", p.SynchronizeContext},
		} {
			check(t, flag.CopyFromHost([]int32{0}))
			check(t, wait.LaunchOn(s, flag, out, spinBound(p)))
			check(t, bad.LaunchOn(s, short))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- wait1.wait(ctx) }()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("%s.SynchronizeContext with the work waiting for a flag: %v, want context.Canceled", wait1.name, err)
			}
			check(t, flag.CopyFromHostOn(s2, one)) // lets the first kernel end
			err := s.Synchronize()
			if err == nil || !strings.Contains(err.Error(), "out of range") {
				t.Fatalf("%s.SynchronizeContext gave up; the next Synchronize returned %v, want the kernel's index error", wait1.name, err)
			}
			if got := toSlice(t, out)[0]; got != 1 {
				t.Fatalf("the waiting kernel ended with %d, want 1 (2: it never saw the flag)", got)
			}
			check(t, s.Synchronize())
		}
	})
}

// TestSameKernelTwoStreamsArgs launches one kernel on two streams with
// different arguments 1000 times: every launch must see its own arguments.
func TestSameKernelTwoStreamsArgs(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.I32))
		const rounds = 1000
		s1 := newStream(t, p)
		s2 := newStream(t, p)
		xs := make([]*Ndarray[int32], 2*rounds)
		for i := range xs {
			xs[i] = newNdarray[int32](t, p, 8)
		}
		var wg sync.WaitGroup
		for side, s := range []*Stream{s1, s2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					i := 2*r + side
					if err := k.LaunchOn(s, xs[i], int32(i)); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		check(t, p.Synchronize())
		for i, x := range xs {
			allEqual(t, fmt.Sprintf("xs[%d]", i), toSlice(t, x), int32(i))
		}
	})
}

// TestTwoStreamsOverlap is a rendezvous: each kernel raises its flag and
// spins until it sees the other's. Both can see each other only if the two
// streams ran them at the same time. (The sides are untyped constants: the
// Go kernel's are ints, the IR kernel's take int or int64.)
func TestTwoStreamsOverlap(t *testing.T) {
	forEachTwin(t, func(t *testing.T, p *Program, kernel func(twin) *Kernel) {
		needs(t, p, needConcurrentStreams)
		k := kernel(rendezvousTwin)
		flags := newNdarray[int32](t, p, 2)
		seen := newNdarray[int32](t, p, 2)
		s1 := newStream(t, p)
		s2 := newStream(t, p)
		iters := spinBound(p)
		check(t, k.LaunchOn(s1, flags, seen, 0, 1, iters))
		check(t, k.LaunchOn(s2, flags, seen, 1, 0, iters))
		check(t, p.Synchronize())
		allEqual(t, "seen", toSlice(t, seen), 1)
	})
}

// TestManyStreamsOverlap: K kernels on K streams, each waiting until all K
// have started (meetAll).
func TestManyStreamsOverlap(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		for _, K := range []int{2, 8, 32} {
			t.Run(fmt.Sprint(K), func(t *testing.T) {
				needsQueues(t, p, K)
				k := build(t, p, suitekernels.RendezvousAll())
				defer k.Close()
				// A first launch may create what a Program makes lazily,
				// streams included. CUDA gives streams its 32 hardware
				// queues in turn, so a stream made between the K would
				// put the first and the last on one queue, where the last
				// kernel waits for the first (seen on two H200s): make
				// them first, then the K streams in a row.
				flags := newNdarray[int32](t, p, K)
				seen := newNdarray[int32](t, p, K)
				check(t, k.Launch(flags, seen, int64(0), int64(0)))
				check(t, p.Synchronize())
				check(t, flags.Close())
				check(t, seen.Close())
				streams := make([]*Stream, K)
				for i := range streams {
					streams[i] = newStream(t, p)
					defer streams[i].Close()
				}
				if got, ok := meetAll(t, p, k, streams, spinBound(p)); !ok {
					t.Errorf("kernels saw %v running at once, want all %d", got, K)
				}
			})
		}
	})
}

// rendezvousAttempts is how many times meetAll runs a rendezvous before it
// reports that the kernels did not meet.
const rendezvousAttempts = 3

// meetAll launches suitekernels.RendezvousAll once on each of streams
// (kernel i on streams[i]; a stream may be given more than once) and
// reports whether every kernel saw all of them running at once, and what
// each saw. It proves concurrency without clocks: a kernel raises its flag
// and spins, at most bound steps, until all K flags are raised.
//
// A correct runtime can still fail it when something outside the K
// launches serializes the device between two of them: a driver call that
// waits for all work, such as the cuMemFree of an array freed by its
// cleanup while the launches go on (the likely cause of a failure seen
// once in 30 runs on an H100, [1 2 32 32 …]: the first kernel ran alone
// until its bound, then the second, then the other 30 together; this
// test dropped the arrays of each K for the collector, and the next K
// launched while they were freed), or a launcher held up past the
// bound. Such events are rare and pass, so meetAll tries again, up to
// rendezvousAttempts times, logging each failure. A retry cannot hide
// launches that serialize: a kernel that starts only after another ends
// is never seen by it, so every attempt fails alike
// (TestMeetAllCatchesSerialization runs all kernels on one stream).
func meetAll(t *testing.T, p *Program, k *Kernel, streams []*Stream, bound int64) ([]int32, bool) {
	t.Helper()
	K := len(streams)
	var got []int32
	for attempt := 1; attempt <= rendezvousAttempts; attempt++ {
		flags := must(NewNdarray[int32](p, K))(t)
		seen := must(NewNdarray[int32](p, K))(t)
		for i, s := range streams {
			check(t, k.LaunchOn(s, flags, seen, int64(i), bound))
		}
		check(t, p.Synchronize())
		got = must(seen.ToSlice())(t)
		// Closed now, not left to the collector: a free is one of the
		// calls that serialize the device.
		check(t, flags.Close())
		check(t, seen.Close())
		if !slices.ContainsFunc(got, func(v int32) bool { return v != int32(K) }) {
			return got, true
		}
		t.Logf("rendezvous attempt %d of %d: kernels saw %v running at once, want all %d", attempt, rendezvousAttempts, got, K)
	}
	return got, false
}

// meetAll fails, every attempt, when the kernels cannot run at once: all
// on one stream, each starts after the one before ends.
func TestMeetAllCatchesSerialization(t *testing.T) {
	p, err := Init(WithArch(CPU))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	k := must(buildKernel(p, suitekernels.RendezvousAll()))(t)
	one := p.DefaultStream()
	got, ok := meetAll(t, p, k, []*Stream{one, one, one, one}, 10_000)
	if ok || !slices.Equal(got, []int32{1, 2, 3, 4}) {
		t.Errorf("4 kernels on one stream: met %v, saw %v; want no meeting, each seeing those before it and itself", ok, got)
	}
}

// TestOrderingUnderLoad chains slow producers and fast consumers across
// streams with WaitEvent and WaitStream, many times, while other streams
// keep the machine busy.
func TestOrderingUnderLoad(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		slow := build(t, p, suitekernels.SlowWrite())
		cp := build(t, p, suitekernels.Copy())
		state := newNdarray[int64](t, p, 1)
		// Background load on other streams, each with its own arrays (two
		// kernels writing one array at once would be a race of the test's).
		for range 2 {
			load := newNdarray[float32](t, p, 1)
			loadState := newNdarray[int64](t, p, 1)
			ls := newStream(t, p)
			check(t, slow.LaunchOn(ls, load, float32(0), loadState, int64(2_000_000)))
		}
		s1 := newStream(t, p)
		s2 := newStream(t, p)
		e := newEvent(t, p)
		const rounds = 20
		outs := make([]*Ndarray[float32], rounds)
		for r := range rounds {
			x := newNdarray[float32](t, p, 32)
			outs[r] = newNdarray[float32](t, p, 32)
			check(t, slow.LaunchOn(s1, x, float32(r+1), state, int64(20000)))
			if r%2 == 0 {
				check(t, e.Record(s1))
				check(t, s2.WaitEvent(e))
			} else {
				check(t, s2.WaitStream(s1))
			}
			check(t, cp.LaunchOn(s2, x, outs[r]))
		}
		check(t, s2.Synchronize())
		for r, o := range outs {
			allEqual(t, fmt.Sprintf("out[%d]", r), toSlice(t, o), float32(r+1))
		}
	})
}

// TestConcurrentLaunchers: 32 goroutines, each with its own stream and
// arrays, launching at once (run with -race).
func TestConcurrentLaunchers(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		k := build(t, p, suitekernels.Fill(ir.I32))
		const G, rounds = 32, 20
		var wg sync.WaitGroup
		errs := make(chan error, G)
		for g := range G {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- func() error {
					s, err := p.NewStream()
					if err != nil {
						return err
					}
					defer s.Close()
					x, err := NewNdarray[int32](p, 256)
					if err != nil {
						return err
					}
					defer x.Close()
					for r := range rounds {
						if err := k.LaunchOn(s, x, int32(g*1000+r)); err != nil {
							return err
						}
					}
					got, err := x.ToSlice()
					if err != nil {
						return err
					}
					for _, v := range got {
						if v != int32(g*1000+rounds-1) {
							return fmt.Errorf("goroutine %d: got %d", g, v)
						}
					}
					return nil
				}()
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// TestProgramClose: Close waits for work, releases everything, and every
// later use reports ErrClosed.
func TestProgramClose(t *testing.T) {
	for _, a := range suiteArchs(t) {
		t.Run(a.String(), func(t *testing.T) {
			p := initProgram(t, WithArch(a))
			slow := build(t, p, suitekernels.SlowWrite())
			x := newNdarray[float32](t, p, 4)
			state := newNdarray[int64](t, p, 1)
			s := newStream(t, p)
			e := newEvent(t, p)
			check(t, slow.LaunchOn(s, x, float32(1), state, int64(100000)))
			check(t, p.Close())
			check(t, p.Close())
			wantErr(t, p.Synchronize(), ErrClosed)
			wantErr(t, slow.LaunchOn(s, x, float32(1), state, int64(1)), ErrClosed)
			wantErr(t, slow.Launch(x, float32(1), state, int64(1)), ErrClosed)
			wantErr(t, s.Synchronize(), ErrClosed)
			wantErr(t, e.Record(s), ErrClosed)
			_, err := x.ToSlice()
			wantErr(t, err, ErrClosed)
			_, err = p.NewStream()
			wantErr(t, err, ErrClosed)
			_, err = NewNdarray[float32](p, 1)
			wantErr(t, err, ErrClosed)
			_, err = buildKernel(p, suitekernels.Copy())
			wantErr(t, err, ErrClosed)
			// Closing objects after their Program is fine.
			check(t, s.Close())
			check(t, e.Close())
			check(t, x.Close())
			check(t, slow.Close())
		})
	}
}

// TestLeakedObjectsReleased drops streams, events and arrays without Close
// and checks that their cleanups release them.
func TestLeakedObjectsReleased(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		// Count what users made: pooled streams come and go with host
		// transfers and are not leaks.
		count := func() int {
			p.mu.Lock()
			defer p.mu.Unlock()
			n := len(p.events) + len(p.arrays)
			for s := range p.streams {
				if s.kind == streamUser {
					n++
				}
			}
			return n
		}
		before := count()
		func() {
			for range 10 {
				newStream(t, p)
				newEvent(t, p)
				newNdarray[float32](t, p, 8)
			}
		}()
		deadline := time.Now().Add(10 * time.Second)
		for count() > before && time.Now().Before(deadline) {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
		}
		if got := count(); got != before {
			t.Fatalf("%d objects still registered after GC, want %d", got, before)
		}
	})
}

// TestForeignObjects: a kernel runs only on its Program's streams and
// arrays, and an event records only on its Program's streams. (Streams of
// two Programs of one backend may wait for each other's events and copy
// between their arrays: suite_peers_test.go.)
func TestForeignObjects(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		q := initProgram(t, WithArch(p.Arch()))
		defer q.Close()
		k := build(t, p, suitekernels.Fill(ir.F32))
		xq := newNdarray[float32](t, q, 4)
		sq := newStream(t, q)
		eq := newEvent(t, q)
		ep := newEvent(t, p, WithTiming())
		wantErr(t, k.Launch(xq, float32(1)), ErrForeign)
		wantErr(t, k.LaunchOn(sq, newNdarray[float32](t, p, 4), float32(1)), ErrForeign)
		wantErr(t, eq.Record(p.DefaultStream()), ErrForeign)
		if _, err := Elapsed(ep, newEvent(t, q, WithTiming())); !errors.Is(err, ErrForeign) {
			t.Errorf("Elapsed across Programs: %v, want ErrForeign", err)
		}
		var ae *ArgumentError
		if err := k.Launch(xq, float32(1)); !errors.As(err, &ae) || ae.Param != "x" {
			t.Errorf("foreign Ndarray: %v, want an ArgumentError for parameter x", err)
		}
	})
}
