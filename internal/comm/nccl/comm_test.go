package nccl

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/comm"
)

// Tests of the transport's logic on the stand-in NCCL (fake_test.go).

func mustAlloc(t *testing.T, d *gpu.Device, n int) (backend.Buffer, uintptr) {
	t.Helper()
	b, err := d.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	p, err := d.BufferAddress(b)
	if err != nil {
		t.Fatal(err)
	}
	return b, uintptr(p)
}

func mustStream(t *testing.T, d *gpu.Device) (backend.Stream, uintptr) {
	t.Helper()
	s, err := d.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h, err := d.StreamHandle(s)
	if err != nil {
		t.Fatal(err)
	}
	return s, h
}

// Each kind reaches its NCCL function with the arguments in nccl.h's
// order and the header's enum values; a batch of one goes without a
// group, a batch of more inside one.
func TestRunLayouts(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, pa := mustAlloc(t, d, 64)
	b, pb := mustAlloc(t, d, 64)
	s, st := mustStream(t, d)
	const H = fakeHandle
	for _, tc := range []struct {
		call comm.Call
		fn   string
		args []uintptr
	}{
		{comm.Call{Kind: comm.AllReduce, Send: a, Recv: b, Count: 16, DType: comm.Float32, Op: comm.Sum},
			"ncclAllReduce", []uintptr{pa, pb, 16, 7, 0, H, st}},
		{comm.Call{Kind: comm.AllReduce, Send: a, Recv: a, Count: 8, DType: comm.Int64, Op: comm.Max},
			"ncclAllReduce", []uintptr{pa, pa, 8, 4, 2, H, st}},
		{comm.Call{Kind: comm.Broadcast, Recv: b, Count: 64, DType: comm.Uint8, Peer: 1},
			"ncclBroadcast", []uintptr{pb, pb, 64, 1, 1, H, st}},
		{comm.Call{Kind: comm.Broadcast, Send: a, Recv: b, Count: 2, DType: comm.Float64, Peer: 0},
			"ncclBroadcast", []uintptr{pa, pb, 2, 8, 0, H, st}},
		{comm.Call{Kind: comm.Reduce, Send: a, Count: 8, DType: comm.Float64, Op: comm.Prod, Peer: 1},
			"ncclReduce", []uintptr{pa, 0, 8, 8, 1, 1, H, st}},
		{comm.Call{Kind: comm.Reduce, Send: a, Recv: b, Count: 16, DType: comm.Int32, Op: comm.Min, Peer: 0},
			"ncclReduce", []uintptr{pa, pb, 16, 2, 3, 0, H, st}},
		{comm.Call{Kind: comm.AllGather, Send: a, Recv: b, Count: 32, DType: comm.Int8},
			"ncclAllGather", []uintptr{pa, pb, 32, 0, H, st}},
		{comm.Call{Kind: comm.ReduceScatter, Send: a, Recv: b, Count: 8, DType: comm.Uint32, Op: comm.Avg},
			"ncclReduceScatter", []uintptr{pa, pb, 8, 3, 4, H, st}},
		{comm.Call{Kind: comm.Send, Send: a, Count: 8, DType: comm.Uint64, Peer: 1},
			"ncclSend", []uintptr{pa, 8, 5, 1, H, st}},
		{comm.Call{Kind: comm.Recv, Recv: b, Count: 16, DType: comm.Float32, Peer: 1},
			"ncclRecv", []uintptr{pb, 16, 7, 1, H, st}},
	} {
		f.reset()
		if err := c.Run(s, []comm.Call{tc.call}); err != nil {
			t.Errorf("%v: %v", tc.call.Kind, err)
			continue
		}
		got := f.snapshot()
		if len(got) != 1 || got[0].name != tc.fn || !reflect.DeepEqual(got[0].args, tc.args) {
			t.Errorf("%v %v: calls %s, want %s%#x", tc.call.Kind, tc.call.DType, fmtCalls(got), tc.fn, tc.args)
		}
	}
	f.reset()
	batch := []comm.Call{
		{Kind: comm.Send, Send: a, Count: 64, DType: comm.Uint8, Peer: 1},
		{Kind: comm.Recv, Recv: b, Count: 64, DType: comm.Uint8, Peer: 1},
	}
	if err := c.Run(s, batch); err != nil {
		t.Fatal(err)
	}
	if got, want := f.names(), []string{"ncclGroupStart", "ncclSend", "ncclRecv", "ncclGroupEnd"}; !reflect.DeepEqual(got, want) {
		t.Errorf("batch: calls %q, want %q", got, want)
	}
	if c.Rank() != 0 || c.Size() != 2 {
		t.Errorf("Rank, Size = %d, %d; want 0, 2", c.Rank(), c.Size())
	}
}

// A call NCCL cannot take is refused before anything of its batch is
// enqueued, with an error that names the call.
func TestRunRefusesBeforeEnqueue(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, _ := mustAlloc(t, d, 64)
	b, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	good := comm.Call{Kind: comm.AllReduce, Send: a, Recv: b, Count: 16, DType: comm.Float32, Name: "first"}
	for _, tc := range []struct {
		bad         comm.Call
		unsupported bool
		want        string
	}{
		{comm.Call{Kind: comm.AllReduce, Send: a, Recv: b, Count: 8, DType: comm.Int16, Name: "AllReduceOn"}, true, "int16"},
		{comm.Call{Kind: comm.Broadcast, Send: a, Recv: b, Count: 8, DType: comm.Uint16, Name: "BroadcastOn"}, true, "uint16"},
		{comm.Call{Kind: comm.AllReduce, Send: a, Recv: b, Count: 17, DType: comm.Float32, Name: "big"}, false, "holds 64 bytes"},
		{comm.Call{Kind: comm.AllGather, Send: a, Recv: b, Count: 16, DType: comm.Float32, Name: "gather"}, false, "needs 128"},
		{comm.Call{Kind: comm.ReduceScatter, Send: a, Recv: b, Count: 16, DType: comm.Float32, Name: "scatter"}, false, "needs 128"},
		{comm.Call{Kind: comm.Send, Send: a, Count: 1, DType: comm.Uint8, Peer: 2, Name: "to2"}, false, "peer 2"},
		{comm.Call{Kind: comm.Reduce, Send: a, Count: 1, DType: comm.Uint8, Peer: -1, Name: "root"}, false, "root -1"},
		{comm.Call{Kind: comm.Broadcast, Recv: b, Count: 1, DType: comm.Uint8, Peer: 0, Name: "rootsend"}, false, "no send buffer"},
		{comm.Call{Kind: comm.AllReduce, Recv: b, Count: 1, DType: comm.Uint8, Name: "nosend"}, false, "no send buffer"},
		{comm.Call{Kind: comm.AllReduce, Send: a, Recv: b, Count: -1, DType: comm.Uint8, Name: "neg"}, false, "count -1"},
		{comm.Call{Kind: 0, Send: a, Recv: b, Count: 1, DType: comm.Uint8}, false, "unknown kind"},
		{comm.Call{Kind: comm.AllReduce, Send: a, Recv: b, Count: 1, DType: 99, Name: "dt"}, false, "unknown element type"},
		{comm.Call{Kind: comm.AllReduce, Send: a, Recv: b, Count: 1, DType: comm.Uint8, Op: 99, Name: "op"}, false, "unknown reduction"},
	} {
		f.reset()
		err := c.Run(s, []comm.Call{good, tc.bad})
		if err == nil {
			t.Errorf("%q: accepted", tc.bad.Name)
			continue
		}
		if errors.Is(err, backend.ErrUnsupported) != tc.unsupported || !strings.Contains(err.Error(), tc.want) ||
			(tc.bad.Name != "" && !strings.Contains(err.Error(), tc.bad.Name)) {
			t.Errorf("%q: %v (want %q, unsupported %v)", tc.bad.Name, err, tc.want, tc.unsupported)
		}
		if n := f.names(); len(n) != 0 {
			t.Errorf("%q: enqueued %q before refusing", tc.bad.Name, n)
		}
	}
	if err := c.Err(); err != nil {
		t.Errorf("a refused call broke the transport: %v", err)
	}

}

// Avg exists from NCCL 2.10.
func TestAvgNeeds210(t *testing.T) {
	lib, f := fakeLib(t)
	lib.version = 2804
	d := fakeDevice(t)
	c, err := lib.NewComm(d, 1, 0, [128]byte{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	f.reset()
	err = c.Run(s, []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32, Op: comm.Avg, Name: "avg"}})
	if !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(err.Error(), "2.8.4") || len(f.names()) != 0 {
		t.Errorf("Avg on NCCL 2.8.4: %v (calls %q)", err, f.names())
	}
	if err := c.Run(s, []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32, Op: comm.Sum}}); err != nil {
		t.Errorf("Sum on NCCL 2.8.4: %v", err)
	}
}

// A failing call is an *Error with NCCL's texts and the call's name; it
// does not break the transport, and a group is ended after it.
func TestCallFailure(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	f.failWith("ncclAllReduce", InvalidArgument)
	call := comm.Call{Kind: comm.AllReduce, Send: a, Recv: a, Count: 4, DType: comm.Float32, Name: "AllReduceOn"}
	err := c.Run(s, []comm.Call{call})
	var e *Error
	if !errors.As(err, &e) || e.Code != InvalidArgument || e.Call != "ncclAllReduce" || e.Last != "fake last error" ||
		e.Text != "fake error text" || !strings.Contains(err.Error(), "AllReduceOn") {
		t.Fatalf("Run: %v (%#v)", err, e)
	}
	t.Log(err)
	if err := c.Err(); err != nil {
		t.Errorf("a failed call broke the transport: %v", err)
	}
	f.reset()
	if err := c.Run(s, []comm.Call{call, call}); !errors.As(err, &e) {
		t.Errorf("batch: %v", err)
	}
	if n := f.names(); len(n) != 3 || n[2] != "ncclGroupEnd" {
		t.Errorf("batch with a failing call: calls %q, want the group ended after it", n)
	}
	if f.depth.Load() != 0 {
		t.Errorf("group depth %d after the batch", f.depth.Load())
	}
}

// An asynchronous error found by Err breaks the Comm, the watch aborts
// the communicator, and Close then releases nothing more.
func TestAsyncErrorBreaks(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	f.async.Store(int32(RemoteError))
	err := c.Err()
	var e *Error
	if !errors.As(err, &e) || !e.Async || e.Code != RemoteError || !strings.Contains(err.Error(), "another rank failed") {
		t.Fatalf("Err: %v", err)
	}
	t.Log(err)
	waitFor(t, "the watch to abort", func() bool { return f.aborts.Load() == 1 })
	if rerr := c.Run(s, []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32}}); !errors.Is(rerr, err) {
		t.Errorf("Run after the failure: %v", rerr)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if f.aborts.Load() != 1 || f.destroys.Load() != 0 {
		t.Errorf("aborts %d, destroys %d; want 1, 0", f.aborts.Load(), f.destroys.Load())
	}
}

// The watch finds an asynchronous error by itself.
func TestWatchAborts(t *testing.T) {
	c, f, _ := fakeComm(t, 2, 0)
	f.async.Store(int32(SystemError))
	waitFor(t, "the watch to abort", func() bool { return f.aborts.Load() == 1 })
	var e *Error
	if err := c.Err(); !errors.As(err, &e) || e.Code != SystemError {
		t.Errorf("Err: %v", err)
	}
}

// Abort keeps its first cause, aborts once, and Runs then fail with it.
func TestAbort(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	cause := errors.New("rank 3 left")
	c.Abort(cause)
	c.Abort(errors.New("second"))
	if f.aborts.Load() != 1 {
		t.Errorf("%d aborts", f.aborts.Load())
	}
	err := c.Run(s, []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32}})
	if !errors.Is(err, cause) || !errors.Is(c.Err(), cause) || strings.Contains(c.Err().Error(), "second") {
		t.Errorf("Run: %v; Err: %v", err, c.Err())
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if f.destroys.Load() != 0 || f.aborts.Load() != 1 {
		t.Errorf("aborts %d, destroys %d; want 1, 0", f.aborts.Load(), f.destroys.Load())
	}
	c2, _, _ := fakeComm(t, 1, 0)
	c2.Abort(nil)
	if err := c2.Err(); err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Errorf("Abort(nil): Err %v", err)
	}
}

// Abort of a Run blocked inside NCCL aborts the communicator under it
// after the grace, which unblocks it.
func TestAbortUnblocksRun(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	f.block, f.groupIn = make(chan struct{}), make(chan struct{}, 1)
	call := comm.Call{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32}
	done := make(chan error, 1)
	go func() { done <- c.Run(s, []comm.Call{call, call}) }()
	<-f.groupIn
	cause := errors.New("peer gone")
	start := time.Now()
	c.Abort(cause)
	if el := time.Since(start); el < abortGrace*9/10 {
		t.Errorf("Abort took %v: it did not wait the grace for the blocked Run", el)
	}
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Errorf("blocked Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the blocked Run did not return after Abort")
	}
	if f.aborts.Load() != 1 {
		t.Errorf("%d aborts", f.aborts.Load())
	}
}

// Abort waits for a Run that leaves NCCL in time, so that the
// communicator is never freed under a healthy call.
func TestAbortWaitsForHealthyRun(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	f.delay, f.groupIn = 50*time.Millisecond, make(chan struct{}, 1)
	call := comm.Call{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32}
	done := make(chan error, 1)
	go func() { done <- c.Run(s, []comm.Call{call, call}) }()
	<-f.groupIn
	c.Abort(errors.New("stop"))
	if err := <-done; err != nil {
		t.Errorf("the Run in progress: %v", err)
	}
	n := f.names()
	if len(n) < 2 || n[len(n)-2] != "ncclGroupEnd returned" || n[len(n)-1] != "ncclCommAbort" {
		t.Errorf("calls %q: the abort did not wait for the group to end", n)
	}
}

// Close destroys a healthy communicator once; later Runs fail as closed.
func TestCloseDestroys(t *testing.T) {
	c, f, d := fakeComm(t, 1, 0)
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if f.destroys.Load() != 1 || f.aborts.Load() != 0 {
		t.Errorf("destroys %d, aborts %d; want 1, 0", f.destroys.Load(), f.aborts.Load())
	}
	err := c.Run(s, []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32}})
	if !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err after Close: %v", err)
	}
	c.Abort(errors.New("late"))
	if f.aborts.Load() != 0 {
		t.Error("Abort after Close called ncclCommAbort")
	}
}

// A non-blocking communicator's ncclInProgress is waited for.
func TestInProgressIsWaitedFor(t *testing.T) {
	c, f, d := fakeComm(t, 1, 0)
	a, _ := mustAlloc(t, d, 64)
	s, _ := mustStream(t, d)
	call := comm.Call{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1, DType: comm.Float32}
	f.failWith("ncclAllReduce", InProgress)
	f.pendingN.Store(3)
	before := f.polls.Load()
	if err := c.Run(s, []comm.Call{call}); err != nil {
		t.Fatal(err)
	}
	if f.polls.Load()-before < 4 {
		t.Errorf("%d polls, want the 3 pending ones and the result", f.polls.Load()-before)
	}
	f.failWith("ncclAllReduce", Success)
	f.failWith("ncclGroupEnd", InProgress)
	f.pendingN.Store(2)
	if err := c.Run(s, []comm.Call{call, call}); err != nil {
		t.Fatal(err)
	}
	f.failWith("ncclGroupEnd", Success)
	f.async.Store(int32(RemoteError))
	f.failWith("ncclAllReduce", InProgress)
	var e *Error
	if err := c.Run(s, []comm.Call{call}); !errors.As(err, &e) || e.Code != RemoteError {
		t.Errorf("a pending call that fails: %v", err)
	}
}

// NewComm passes size, rank and id to the scalable init by pointer, and
// to ncclCommInitRank by value where the scalable one is absent.
func TestInitPaths(t *testing.T) {
	d := fakeDevice(t)
	id := [128]byte{}
	for i := range id {
		id[i] = byte(200 - i)
	}
	for _, scalable := range []bool{true, false} {
		lib, f := fakeLib(t)
		want := "ncclCommInitRankScalable"
		if !scalable {
			if lib.f.initRank.Addr == 0 {
				t.Logf("no by-value layout of ncclCommInitRank's id on this platform: not tested here")
				continue
			}
			lib.f.initScalable = gpu.Fn{Name: "ncclCommInitRankScalable"}
			want = "ncclCommInitRank"
		}
		lastID = [128]byte{}
		c, err := lib.NewComm(d, 4, 2, id)
		if err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		cs := f.snapshot()
		if len(cs) == 0 || cs[0].name != want || cs[0].args[0] != 4 || cs[0].args[1] != 2 {
			t.Errorf("%s: calls %s", want, fmtCalls(cs))
		}
		if scalable && (cs[0].args[2] != 1 || cs[0].args[3] != 0) {
			t.Errorf("%s: nId %d, config %#x; want 1 id, the default config", want, cs[0].args[2], cs[0].args[3])
		}
		if lastID != id {
			t.Errorf("%s: NCCL read the id %x, want %x", want, lastID[:16], id[:16])
		}
		if c.Rank() != 2 || c.Size() != 4 {
			t.Errorf("%s: Rank, Size = %d, %d", want, c.Rank(), c.Size())
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
}

// A failing init is an *Error naming the init call; the handle it may
// have made is aborted.
func TestInitFailure(t *testing.T) {
	lib, f := fakeLib(t)
	d := fakeDevice(t)
	f.failWith("ncclCommInitRankScalable", SystemError)
	_, err := lib.NewComm(d, 2, 1, [128]byte{})
	var e *Error
	if !errors.As(err, &e) || e.Code != SystemError || e.Call != "ncclCommInitRankScalable" || !strings.Contains(err.Error(), "rank 1 of 2") {
		t.Fatalf("NewComm: %v", err)
	}
	if f.aborts.Load() != 1 {
		t.Errorf("%d aborts of the failed init's handle, want 1", f.aborts.Load())
	}
	for _, tc := range []struct{ size, rank int }{{0, 0}, {2, 2}, {2, -1}} {
		if _, err := lib.NewComm(d, tc.size, tc.rank, [128]byte{}); err == nil {
			t.Errorf("NewComm(size %d, rank %d) accepted", tc.size, tc.rank)
		}
	}
	if _, err := lib.NewComm(nil, 1, 0, [128]byte{}); err == nil {
		t.Error("NewComm without a device accepted")
	}
	cuda := *lib
	cuda.arch = "cuda"
	if _, err := cuda.NewComm(d, 1, 0, [128]byte{}); err == nil || !strings.Contains(err.Error(), "fake") {
		t.Errorf("NCCL on a fake device: %v", err)
	}
}

// Batches of concurrent Runs never interleave their groups.
func TestConcurrentRunsDoNotInterleave(t *testing.T) {
	c, f, d := fakeComm(t, 2, 0)
	a, _ := mustAlloc(t, d, 64)
	batch := []comm.Call{
		{Kind: comm.Send, Send: a, Count: 64, DType: comm.Uint8, Peer: 1},
		{Kind: comm.Recv, Recv: a, Count: 64, DType: comm.Uint8, Peer: 1},
	}
	var wg sync.WaitGroup
	for range 8 {
		s, _ := mustStream(t, d)
		wg.Go(func() {
			for range 50 {
				if err := c.Run(s, batch); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if f.overlaps.Load() != 0 {
		t.Errorf("%d groups started inside another", f.overlaps.Load())
	}
	if n := len(f.names()); n != 8*50*4 {
		t.Errorf("%d calls, want %d", n, 8*50*4)
	}
}
