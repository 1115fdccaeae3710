package nccl

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/comm"
)

var _ comm.Transport = (*Comm)(nil)

const (
	// watchEvery is how often the watch polls ncclCommGetAsyncError. NCCL
	// documents the poll as cheap; 100 ms bounds how long kernels spin on a
	// dead peer before the abort.
	watchEvery = 100 * time.Millisecond
	// abortGrace is how long Abort waits for a Run in progress to leave
	// NCCL before it aborts the communicator under it. A Run that is
	// healthy leaves in microseconds; one still inside after this is taken
	// as blocked in NCCL (a peer that never connects), which is the case
	// ncclCommAbort from another thread exists for.
	abortGrace = 500 * time.Millisecond
	// inProgressPoll is the pause between polls of a non-blocking
	// communicator's pending operation.
	inProgressPoll = 20 * time.Microsecond
)

// Comm is one rank of an NCCL communicator on one device: a
// comm.Transport. Its methods are safe for concurrent use.
type Comm struct {
	lib        *Lib
	d          *gpu.Device
	rank, size int

	// h is the ncclComm_t; 0 once released (Close, Abort). Run reads it
	// under mu; release swaps it to 0 under hmu, after taking mu unless a
	// Run is blocked (Abort's grace).
	h atomic.Uintptr

	// mu is the group lock: one batch of calls at a time, from its first
	// NCCL call to ncclGroupEnd. It guards ops and the fields below.
	// NCCL forbids concurrent calls on one communicator, so every call
	// that enqueues work holds it, RawAllReduce's too.
	mu  sync.Mutex
	ops []op       // the batch being enqueued (run.go)
	raw [7]uintptr // RawAllReduce's argument list

	// hmu orders polls of ncclCommGetAsyncError against the release of h,
	// and guards the poll frame.
	hmu      sync.Mutex
	pollArgs [2]uintptr // {h, &pollOut}
	pollOut  int32
	pollRet  int32

	failure atomic.Pointer[failure] // the first error that broke the Comm

	stop      chan struct{} // closed to stop the watch
	stopOnce  sync.Once
	kick      chan struct{} // a failure was recorded: the watch aborts
	watchDone chan struct{}
	abortOnce sync.Once
	closeOnce sync.Once
	closeErr  error

	// Init's out-parameter and the id's copy, in the Comm so that they
	// are heap memory NCCL may write and read during the call.
	initOut uintptr
	id      [128]byte
}

type failure struct{ err error }

// NewComm joins the communicator named by id (from NewUniqueID on one
// rank) as rank rank of size, on device d, which must be of the library's
// arch. It blocks until every rank has joined: NCCL's init is collective
// and has no deadline of its own, so a rank that never comes makes it
// wait; callers create communicators after their rendezvous has seen
// every rank arrive.
func (l *Lib) NewComm(d *gpu.Device, size, rank int, id [128]byte) (*Comm, error) {
	if d == nil {
		return nil, fmt.Errorf("nccl: NewComm: no device")
	}
	if d.Arch() != l.arch {
		return nil, fmt.Errorf("nccl: NewComm: %s serves %s devices, not %s", l.vendor, l.arch, d.Arch())
	}
	if size < 1 || rank < 0 || rank >= size || size > 1<<30 {
		return nil, fmt.Errorf("nccl: NewComm: rank %d of a communicator of size %d", rank, size)
	}
	c := &Comm{
		lib: l, d: d, rank: rank, size: size, id: id,
		stop: make(chan struct{}), kick: make(chan struct{}, 1), watchDone: make(chan struct{}),
	}
	out := uintptr(unsafe.Pointer(&c.initOut))
	fn := &l.f.initScalable
	var args []uintptr
	if fn.Bound() {
		args = scalableArgs(out, size, rank, &c.id)
	} else {
		fn = &l.f.initRank
		var ok bool
		if args, ok = initRankArgs(out, size, rank, &c.id); !ok {
			return nil, fmt.Errorf("nccl: %s lacks ncclCommInitRankScalable, and qd cannot pass ncclCommInitRank's by-value id on this platform", l.lib.Name)
		}
	}
	var gotRank, gotSize int32
	err := d.Do(func() error {
		r := gpu.Call(fn, args...)
		h := c.initOut
		if r == inProgress && h != 0 {
			r = c.pending(h)
		}
		what := fn
		if r == success {
			what = &l.f.commCount
			r = gpu.Call(what, h, uintptr(unsafe.Pointer(&gotSize)))
		}
		if r == success {
			what = &l.f.commUserRank
			r = gpu.Call(what, h, uintptr(unsafe.Pointer(&gotRank)))
		}
		if r == success {
			return nil
		}
		err := l.newError(what.Name, r, h)
		if h != 0 {
			// A failed init may still have made a handle (a non-blocking
			// one, or one whose queries failed); abort frees it.
			gpu.Call(&l.f.abort, h)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("nccl: joining as rank %d of %d: %w", rank, size, err)
	}
	c.h.Store(c.initOut)
	if int(gotSize) != size || int(gotRank) != rank {
		c.releaseHandle(true)
		return nil, fmt.Errorf("nccl: the communicator %s made is rank %d of %d, not %d of %d as asked", l.vendor, gotRank, gotSize, rank, size)
	}
	c.pollArgs = [2]uintptr{c.initOut, uintptr(unsafe.Pointer(&c.pollOut))}
	go c.watch()
	return c, nil
}

// pending waits for the operation a non-blocking communicator h answered
// ncclInProgress for, and returns its result. It runs on a call path.
func (c *Comm) pending(h uintptr) int32 {
	var res int32
	for {
		if r := gpu.Call(&c.lib.f.getAsyncError, h, uintptr(unsafe.Pointer(&res))); r != success {
			return r
		}
		if res != inProgress {
			return res
		}
		time.Sleep(inProgressPoll)
	}
}

// Rank is this member's rank, as NCCL reported it (ncclCommUserRank).
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks, as NCCL reported it (ncclCommCount).
func (c *Comm) Size() int { return c.size }

// Lib is the library the communicator runs on.
func (c *Comm) Lib() *Lib { return c.lib }

// Failure is the error that broke the Comm as recorded so far (by Abort,
// a failed call or the watch's poll), without polling NCCL itself.
func (c *Comm) Failure() error {
	if f := c.failure.Load(); f != nil {
		return f.err
	}
	return nil
}

// Err is the error that broke the Comm, or nil while it works. It polls
// ncclCommGetAsyncError, so a fault NCCL has seen is reported at once, not
// at the watch's next poll.
func (c *Comm) Err() error {
	if f := c.failure.Load(); f != nil {
		return f.err
	}
	return c.poll()
}

// poll asks NCCL whether the communicator has failed. A failure is
// recorded, and the watch is told to abort; poll returns it.
func (c *Comm) poll() error {
	c.hmu.Lock()
	if c.h.Load() == 0 {
		c.hmu.Unlock()
		return nil
	}
	c.pollOut, c.pollRet = 0, 0
	err := c.d.Do(c.pollCall)
	c.hmu.Unlock()
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		err = fmt.Errorf("%s: the device of the communicator is unusable: %w", c.lib.vendor, err)
	}
	c.breakWith(err)
	return c.failure.Load().err
}

// pollCall is poll's call path, a method value so that it costs no
// allocation.
func (c *Comm) pollCall() error {
	r, _, _ := purego.SyscallN(c.lib.f.getAsyncError.Addr, c.pollArgs[:]...)
	c.pollRet = int32(uint32(r))
	switch {
	case c.pollRet != success:
		return c.lib.newError(c.lib.f.getAsyncError.Name, c.pollRet, c.pollArgs[0])
	case c.pollOut != success && c.pollOut != inProgress:
		e := c.lib.newError(c.lib.f.getAsyncError.Name, c.pollOut, c.pollArgs[0])
		e.Async = true
		return e
	}
	return nil
}

// breakWith records err as what broke the Comm, unless something did
// already, and has the watch abort the communicator.
func (c *Comm) breakWith(err error) {
	if c.failure.CompareAndSwap(nil, &failure{err}) {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// watch polls for asynchronous errors until the Comm is closed or
// aborted; on one it aborts the communicator, so that kernels waiting for
// a dead peer exit.
func (c *Comm) watch() {
	defer close(c.watchDone)
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		case <-t.C:
			c.poll()
		}
		if c.failure.Load() != nil {
			c.abortComm()
			return
		}
	}
}

func (c *Comm) stopWatch() { c.stopOnce.Do(func() { close(c.stop) }) }

// errAborted is the cause of an Abort given none.
var errAborted = errors.New("aborted")

// Abort breaks the Comm with cause and aborts the communicator
// (ncclCommAbort): NCCL kernels in flight exit, so streams waiting for
// them finish, and later Runs fail with an error that wraps cause (the
// first cause, when Abort is called more than once). It returns once the
// communicator is aborted.
//
// It may be called from any goroutine, also while a Run, or a wait for a
// stream, is in progress. It waits up to half a second for a Run inside
// NCCL to leave it; a Run still inside then is blocked there (waiting for
// a peer), and the communicator is aborted under it, as NCCL allows for
// unblocking such a call.
func (c *Comm) Abort(cause error) {
	if cause == nil {
		cause = errAborted
	}
	c.failure.CompareAndSwap(nil, &failure{fmt.Errorf("%s: communicator aborted: %w", c.lib.vendor, cause)})
	c.abortComm()
}

// abortComm aborts the communicator once, for Abort and for the watch.
func (c *Comm) abortComm() {
	c.abortOnce.Do(func() {
		c.stopWatch()
		locked := c.lockWithin(abortGrace)
		c.releaseHandle(true)
		if locked {
			c.mu.Unlock()
		}
	})
}

// lockWithin takes mu if it comes free within d.
func (c *Comm) lockWithin(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !c.mu.TryLock() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// releaseHandle destroys (abort false) or aborts the communicator, once:
// whoever comes first swaps the handle out.
func (c *Comm) releaseHandle(abort bool) error {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	h := c.h.Swap(0)
	if h == 0 {
		return nil
	}
	fn := &c.lib.f.destroy
	if abort {
		fn = &c.lib.f.abort
	}
	err := c.d.Do(func() error {
		// A non-blocking communicator may answer ncclInProgress; its
		// teardown then finishes on NCCL's threads, and the handle must
		// not be polled any more.
		if r := gpu.Call(fn, h); r != success && r != inProgress {
			return c.lib.newError(fn.Name, r, 0)
		}
		return nil
	})
	if errors.Is(err, gpu.ErrDeviceClosed) {
		return fmt.Errorf("nccl: releasing the communicator: %w (close the communicator before its device)", err)
	}
	if err != nil {
		return fmt.Errorf("nccl: releasing the communicator: %w", err)
	}
	return nil
}

// Close releases the communicator: ncclCommDestroy, or ncclCommAbort when
// the Comm is broken. The caller has waited for the streams its work was
// enqueued on; graphs that captured its calls are closed first. Later
// Runs fail with an error matching backend.ErrClosed. Close is
// idempotent and returns the first call's result.
func (c *Comm) Close() error {
	c.closeOnce.Do(func() {
		// The watch first: it may be aborting, which then completes.
		c.stopWatch()
		<-c.watchDone
		c.mu.Lock()
		c.closeErr = c.releaseHandle(c.failure.Load() != nil)
		c.mu.Unlock()
	})
	return c.closeErr
}
