package qd

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// parkedIn reports whether a goroutine whose stack holds fn is parked on a
// condition (a sync.Cond, a channel, a lock): asleep until someone wakes
// it, not polling. A goroutine in time.Sleep shows "[sleep]", one polling
// between sleeps "[running]" or "[runnable]".
func parkedIn(buf []byte, fn string) bool {
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if !bytes.Contains(g, []byte(fn)) {
			continue
		}
		header, _, _ := strings.Cut(string(g), "\n")
		for _, state := range []string{"[sync.Cond.Wait", "[chan receive", "[select", "[semacquire", "[sync.Mutex.Lock", "[sync.RWMutex.Lock", "[sync.RWMutex.RLock"} {
			if strings.Contains(header, state) {
				return true
			}
		}
	}
	return false
}

// waitParked spins (boundedly) until a goroutine running fn is parked.
func waitParked(t *testing.T, fn string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 1000 {
		if parkedIn(buf, fn) {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("no goroutine in %s parked on a condition: it polls, or never waits", fn)
}

// TestCloseWaitsWithoutPolling holds a launch between argument binding and
// its enqueue, then closes its stream and its array in other goroutines:
// both Closes must wait for the launch asleep on a condition, and return
// once it is enqueued.
func TestCloseWaitsWithoutPolling(t *testing.T) {
	forEachArchFaulty(t, func(t *testing.T, p *Program, d *faultyDevice) {
		k := build(t, p, suitekernels.Fill(ir.F32))
		x := newNdarray[float32](t, p, 16)
		s := newStream(t, p)
		entered, release := make(chan struct{}), make(chan struct{})
		hold := func(int) error {
			close(entered)
			<-release
			return nil
		}
		d.failRun.Store(&hold)
		var wg sync.WaitGroup
		releaseOnce := sync.OnceFunc(func() { close(release) })
		// Also on failure: let the launch and the Closes finish.
		defer wg.Wait()
		defer releaseOnce()
		defer d.failRun.Store(nil)
		errs := make(chan error, 3)
		wg.Add(3)
		go func() { defer wg.Done(); errs <- k.LaunchOn(s, x, float32(3)) }()
		<-entered
		go func() { defer wg.Done(); errs <- s.Close() }()
		go func() { defer wg.Done(); errs <- x.Close() }()
		waitParked(t, "qd.(*Program).closeStream")
		waitParked(t, "qd.(*ndCore).close")
		releaseOnce()
		wg.Wait()
		close(errs)
		for err := range errs {
			check(t, err)
		}
	})
}

// TestBusy: wait returns at once when nothing is in progress, and after the
// last of several operations leaves otherwise.
func TestBusy(t *testing.T) {
	for _, ops := range []int{0, 1, 8} {
		var b busy
		for range ops {
			b.enter()
		}
		done := make(chan struct{})
		go func() { b.wait(); close(done) }()
		for range ops {
			b.leave()
		}
		<-done
		if n := b.n.Load(); n != 0 {
			t.Fatalf("%d ops: count %d after wait", ops, n)
		}
	}
}
