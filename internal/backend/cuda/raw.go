package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

// RawLaunchCost is the reference of the launch host-cost bar (SPEC §7): the
// host time of one cuLaunchKernel through this package's bindings, with
// nothing else on the path. It launches task 0 of mod (a Module compiled by
// this package's Device, so the same PTX qd launches) with args on s, n
// times, from one goroutine locked to its OS thread with the context made
// current once, with kernelParams packed once, synchronizing s every
// syncEvery launches so that the driver's queue never fills (a full queue
// would make cuLaunchKernel wait for the GPU). It returns the mean host
// time per launch, synchronizations excluded.
func RawLaunchCost(mod backend.Module, args *backend.Args, s backend.Stream, n, syncEvery int) (time.Duration, error) {
	h, ok := mod.(*moduleHandle)
	if !ok || h == nil {
		return 0, fmt.Errorf("cuda: RawLaunchCost of a %T", mod)
	}
	if n <= 0 || syncEvery <= 0 {
		return 0, errors.New("cuda: RawLaunchCost needs n > 0 and syncEvery > 0")
	}
	bl, err := h.Begin(s, args)
	if err != nil {
		return 0, err
	}
	l := bl.(*launch)
	defer l.End(s)
	st, err := h.m.d.asStream(s)
	if err != nil {
		return 0, err
	}
	d := h.m.d
	// The launch block (l) holds the parameter values and the
	// kernelParams array that kargs points at; it stays alive until End.
	kargs := new([11]uintptr)
	*kargs = l.kargs[0]
	kargs[1] = uintptr(max(l.grids[0], 1))
	kargs[8] = st.h
	sync := []uintptr{st.h}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	var total time.Duration
	for done := 0; done < n; {
		burst := min(syncEvery, n-done)
		t0 := time.Now()
		for range burst {
			if r := callRes(purego.SyscallN(d.sym.launchKernel, kargs[:]...)); r != cudaSuccess {
				return 0, d.check("cuLaunchKernel", r)
			}
		}
		total += time.Since(t0)
		if r := callRes(purego.SyscallN(d.sym.streamSynchronize, sync...)); r != cudaSuccess {
			return 0, d.check("cuStreamSynchronize", r)
		}
		done += burst
	}
	runtime.KeepAlive(l)
	runtime.KeepAlive(unsafe.Pointer(kargs))
	return total / time.Duration(n), nil
}
