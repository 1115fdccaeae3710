package gpu

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

var _ backend.RawLauncher = (*loadedModule)(nil)

// RawLaunchCost is the reference of the launch host-cost bar: the host time
// of one Calls.LaunchKernel through these bindings, with nothing else on
// the path. It launches task 0 of m (the same device code qd launches) with
// args on s, n times, from one goroutine locked to its OS thread with the
// device made current once, with the parameters packed once, synchronizing
// s every syncEvery launches so that the driver's queue never fills (a full
// queue would make a launch wait for the GPU). It returns the mean host
// time per launch, synchronizations excluded.
func (m *loadedModule) RawLaunchCost(args *backend.Args, s backend.Stream, n, syncEvery int) (time.Duration, error) {
	if n <= 0 || syncEvery <= 0 {
		return 0, errors.New("gpu: RawLaunchCost needs n > 0 and syncEvery > 0")
	}
	d := m.d
	bl, err := m.Begin(s, args)
	if err != nil {
		return 0, err
	}
	l := bl.(*launch)
	defer l.End(s)
	st, err := d.asStream(s)
	if err != nil {
		return 0, err
	}
	// The launch block (l) holds the parameter values and the params array
	// that kargs points at; it stays alive until End.
	kargs := new([11]uintptr)
	*kargs = l.kargs[0]
	kargs[1] = uintptr(max(l.grids[0], 1))
	kargs[8] = st.h
	cost, err := d.rawBursts(&d.c.LaunchKernel, kargs[:], st, n, syncEvery)
	runtime.KeepAlive(l)
	runtime.KeepAlive(unsafe.Pointer(kargs))
	return cost, err
}

// rawBursts is the timing loop of the raw references: fn(args...) n times
// through SyscallN from one goroutine locked to its thread with the device
// made current once, synchronizing s (untimed) every syncEvery calls. It
// returns the mean host time per call.
func (d *Device) rawBursts(fn *Fn, args []uintptr, s *stream, n, syncEvery int) (time.Duration, error) {
	if n <= 0 || syncEvery <= 0 {
		return 0, errors.New("gpu: RawLaunchCost needs n > 0 and syncEvery > 0")
	}
	if err := d.enter(); err != nil {
		return 0, err
	}
	defer d.leave()
	var total time.Duration
	for done := 0; done < n; {
		burst := min(syncEvery, n-done)
		t0 := time.Now()
		for range burst {
			if r := res(purego.SyscallN(fn.Addr, args...)); r != 0 {
				return 0, d.fail(fn, r)
			}
		}
		total += time.Since(t0)
		if r := res(purego.SyscallN(d.c.StreamSynchronize.Addr, s.args...)); r != 0 {
			return 0, d.fail(&d.c.StreamSynchronize, r)
		}
		done += burst
	}
	return total / time.Duration(n), nil
}
