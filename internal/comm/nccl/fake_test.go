package nccl

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
)

// A stand-in NCCL made of Go callbacks (purego.NewCallback), on the GPU
// runtime's fake device: the package's own logic (argument layouts,
// groups, failure, abort, close) runs on machines without a GPU. The
// fake moves no data; what NCCL computes is tested on a GPU (gpu_test.go).

const fakeHandle = 0xC0FFEE00 // the ncclComm_t the fake hands out

// fakeCall is one call the fake received.
type fakeCall struct {
	name string
	args []uintptr
}

// fake is the state behind the callbacks: one per test (fakeLib).
type fake struct {
	mu    sync.Mutex
	calls []fakeCall // every call but ncclCommGetAsyncError (the watch polls it)
	fail  map[string]int32

	async    atomic.Int32 // what ncclCommGetAsyncError reports
	pendingN atomic.Int32 // polls that report ncclInProgress before async's value
	polls    atomic.Int32
	aborts   atomic.Int32
	destroys atomic.Int32
	depth    atomic.Int32 // group depth, over every thread
	overlaps atomic.Int32 // a group started inside another

	block   chan struct{} // when set, ncclGroupEnd waits for it to close (an abort closes it)
	unblock sync.Once
	groupIn chan struct{} // signalled when ncclGroupEnd starts waiting
	delay   time.Duration // when set, ncclGroupEnd takes this long (and logs its return)
}

var (
	fakeNow     atomic.Pointer[fake]
	fakeFnsOnce sync.Once
	fakeFns     fns
	cText       = []byte("fake error text\x00")
	cLast       = []byte("fake last error\x00")
)

// ptr is the address a as a pointer, converted through memory so that vet
// does not flag it: a is C-side memory or Go heap memory kept alive.
func ptr(a uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&a)) }

// record logs a call and returns the code the test chose for it.
func record(name string, args ...uintptr) uintptr {
	f := fakeNow.Load()
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{name, append([]uintptr(nil), args...)})
	code := f.fail[name]
	f.mu.Unlock()
	return uintptr(code)
}

func makeFakeFns() {
	f := &fakeFns
	set := func(fn *gpu.Fn, name string, addr uintptr) { fn.Name, fn.Addr = name, addr }
	set(&f.getVersion, "ncclGetVersion", purego.NewCallback(func(p uintptr) uintptr {
		*(*int32)(ptr(p)) = 22803
		return 0
	}))
	set(&f.getUniqueID, "ncclGetUniqueId", purego.NewCallback(func(p uintptr) uintptr {
		id := (*[128]byte)(ptr(p))
		for i := range id {
			id[i] = byte(i + 1)
		}
		return record("ncclGetUniqueId")
	}))
	set(&f.initScalable, "ncclCommInitRankScalable", purego.NewCallback(func(out, n, r, nID, ids, cfg uintptr) uintptr {
		code := record("ncclCommInitRankScalable", n, r, nID, cfg)
		recordID((*[128]byte)(ptr(ids)))
		*(*uintptr)(ptr(out)) = fakeHandle
		return code
	}))
	set(&f.initRank, "ncclCommInitRank", fakeInitRank())
	set(&f.destroy, "ncclCommDestroy", purego.NewCallback(func(h uintptr) uintptr {
		fakeNow.Load().destroys.Add(1)
		return record("ncclCommDestroy", h)
	}))
	set(&f.abort, "ncclCommAbort", purego.NewCallback(func(h uintptr) uintptr {
		fk := fakeNow.Load()
		fk.aborts.Add(1)
		// NCCL's abort flag ends what is blocked inside the communicator.
		fk.unblock.Do(func() {
			if fk.block != nil {
				close(fk.block)
			}
		})
		return record("ncclCommAbort", h)
	}))
	set(&f.getAsyncError, "ncclCommGetAsyncError", purego.NewCallback(func(h, out uintptr) uintptr {
		fk := fakeNow.Load()
		fk.polls.Add(1)
		v := fk.async.Load()
		if fk.pendingN.Load() > 0 {
			fk.pendingN.Add(-1)
			v = inProgress
		}
		*(*int32)(ptr(out)) = v
		return 0
	}))
	set(&f.getErrorString, "ncclGetErrorString", purego.NewCallback(func(r uintptr) uintptr {
		return uintptr(unsafe.Pointer(&cText[0]))
	}))
	set(&f.getLastError, "ncclGetLastError", purego.NewCallback(func(h uintptr) uintptr {
		return uintptr(unsafe.Pointer(&cLast[0]))
	}))
	cb7 := func(name string) uintptr {
		return purego.NewCallback(func(a0, a1, a2, a3, a4, a5, a6 uintptr) uintptr {
			return record(name, a0, a1, a2, a3, a4, a5, a6)
		})
	}
	cb6 := func(name string) uintptr {
		return purego.NewCallback(func(a0, a1, a2, a3, a4, a5 uintptr) uintptr {
			return record(name, a0, a1, a2, a3, a4, a5)
		})
	}
	set(&f.allReduce, "ncclAllReduce", cb7("ncclAllReduce"))
	set(&f.broadcast, "ncclBroadcast", cb7("ncclBroadcast"))
	set(&f.reduce, "ncclReduce", purego.NewCallback(func(a0, a1, a2, a3, a4, a5, a6, a7 uintptr) uintptr {
		return record("ncclReduce", a0, a1, a2, a3, a4, a5, a6, a7)
	}))
	set(&f.allGather, "ncclAllGather", cb6("ncclAllGather"))
	set(&f.reduceScatter, "ncclReduceScatter", cb7("ncclReduceScatter"))
	set(&f.send, "ncclSend", cb6("ncclSend"))
	set(&f.recv, "ncclRecv", cb6("ncclRecv"))
	set(&f.groupStart, "ncclGroupStart", purego.NewCallback(func() uintptr {
		fk := fakeNow.Load()
		if fk.depth.Add(1) > 1 {
			fk.overlaps.Add(1)
		}
		return record("ncclGroupStart")
	}))
	set(&f.groupEnd, "ncclGroupEnd", purego.NewCallback(func() uintptr {
		fk := fakeNow.Load()
		code := record("ncclGroupEnd")
		switch {
		case fk.block != nil:
			fk.groupIn <- struct{}{}
			<-fk.block
			code = uintptr(RemoteError)
		case fk.delay > 0:
			fk.groupIn <- struct{}{}
			time.Sleep(fk.delay)
			record("ncclGroupEnd returned")
		}
		fk.depth.Add(-1)
		return code
	}))
	set(&f.commCount, "ncclCommCount", purego.NewCallback(func(h, out uintptr) uintptr {
		*(*int32)(ptr(out)) = int32(fakeNow.Load().size())
		return 0
	}))
	set(&f.commUserRank, "ncclCommUserRank", purego.NewCallback(func(h, out uintptr) uintptr {
		*(*int32)(ptr(out)) = int32(fakeNow.Load().rank())
		return 0
	}))
}

// The size and rank the fake's last init was asked for.
func (f *fake) size() int { return int(f.initInt(0)) }
func (f *fake) rank() int { return int(f.initInt(1)) }

func (f *fake) initInt(i int) uintptr {
	for _, c := range f.snapshot() {
		if c.name == "ncclCommInitRankScalable" || c.name == "ncclCommInitRank" {
			return c.args[i]
		}
	}
	return 0
}

var lastID [128]byte

func recordID(id *[128]byte) { lastID = *id }

// fakeInitRank is ncclCommInitRank(comm*, nranks, ncclUniqueId id, rank)
// as the platform's C convention delivers it to a callee, which is what a
// purego callback reads: on SysV x86-64 three registers and the id in the
// stack slots; on AArch64 the id by pointer.
func fakeInitRank() uintptr {
	switch {
	case isSysVAMD64():
		return purego.NewCallback(func(out, n, r, _, _, _, w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15 uintptr) uintptr {
			var id [128]byte
			for i, w := range []uintptr{w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12, w13, w14, w15} {
				binary.LittleEndian.PutUint64(id[8*i:], uint64(w))
			}
			recordID(&id)
			*(*uintptr)(ptr(out)) = fakeHandle
			return record("ncclCommInitRank", n, r)
		})
	case isAArch64():
		return purego.NewCallback(func(out, n, idp, r uintptr) uintptr {
			recordID((*[128]byte)(ptr(idp)))
			*(*uintptr)(ptr(out)) = fakeHandle
			return record("ncclCommInitRank", n, r)
		})
	}
	return 0
}

func (f *fake) snapshot() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// names are the names of the calls the fake received since the last reset.
func (f *fake) names() []string {
	var s []string
	for _, c := range f.snapshot() {
		s = append(s, c.name)
	}
	return s
}

func (f *fake) reset() {
	f.mu.Lock()
	f.calls = nil
	f.mu.Unlock()
}

func (f *fake) failWith(name string, code Result) {
	f.mu.Lock()
	f.fail[name] = int32(code)
	f.mu.Unlock()
}

// fakeLib makes a fresh fake and a Lib bound to it, for the fake device's
// arch.
func fakeLib(t *testing.T) (*Lib, *fake) {
	t.Helper()
	fakeFnsOnce.Do(makeFakeFns)
	f := &fake{fail: map[string]int32{}}
	fakeNow.Store(f)
	return &Lib{arch: "fake", vendor: "NCCL", lib: &gpu.Library{Name: "fake NCCL"}, version: 22803, f: fakeFns, issue: new(sync.Mutex)}, f
}

// fakeDevice opens the GPU runtime's fake device for t.
func fakeDevice(t *testing.T) *gpu.Device {
	t.Helper()
	drv, err := fakedriver.Default()
	if err != nil {
		t.Skipf("no fake driver (purego callbacks unavailable here): %v", err)
	}
	return gputest.Open(t, drv)
}

// fakeComm is a communicator of size ranks, this one rank, on the fake.
func fakeComm(t *testing.T, size, rank int) (*Comm, *fake, *gpu.Device) {
	t.Helper()
	lib, f := fakeLib(t)
	d := fakeDevice(t)
	c, err := lib.NewComm(d, size, rank, [128]byte{7: 7})
	if err != nil {
		t.Fatalf("NewComm: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	f.reset()
	return c, f, d
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func fmtCalls(cs []fakeCall) string {
	s := ""
	for _, c := range cs {
		s += fmt.Sprintf("%s%#x ", c.name, c.args)
	}
	return s
}
