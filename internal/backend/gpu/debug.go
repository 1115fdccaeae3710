package gpu

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
)

// Index checks (backend.CompileOptions.Debug).
//
// A module built with Debug checks every array index, and its launches
// carry a violation record of kabi.DebugWords words after their
// temporaries. Begin zeroes the record in the order of the launch stream;
// End copies it, in the same order, into a slot of page-locked host memory
// that stays with the stream. The stream's next Synchronize (or Close)
// reads its slots, oldest first, and reports the first violation: the
// error of the launch that raised it, reported once, to the stream it was
// launched on, as the CPU backend reports its own.
//
// A stream that is never synchronized would keep its slots forever, so End
// waits for the stream itself once maxPending slots are out, and keeps the
// first violation it finds for the next Synchronize.

const (
	recordBytes = kabi.DebugWords * 8
	slabRecords = 128 // records per page-locked allocation
	maxPending  = 1024
)

// records hands out violation-record slots from page-locked slabs. Its
// methods that allocate run inside d.enter/leave.
type records struct {
	mu    sync.Mutex
	slabs []uintptr
	free  []uintptr
}

// get returns a free slot.
func (r *records) get(d *Device) (uintptr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.free); n > 0 {
		a := r.free[n-1]
		r.free = r.free[:n-1]
		return a, nil
	}
	var slab uintptr
	res0 := res(purego.SyscallN(d.c.HostAlloc.Addr, uintptr(unsafe.Pointer(&slab)), slabRecords*recordBytes, d.codes.HostAllocPortable))
	if err := d.check(&d.c.HostAlloc, res0); err != nil {
		return 0, err
	}
	r.slabs = append(r.slabs, slab)
	for i := slabRecords - 1; i > 0; i-- {
		r.free = append(r.free, slab+uintptr(i*recordBytes))
	}
	return slab, nil
}

func (r *records) put(a uintptr) {
	r.mu.Lock()
	r.free = append(r.free, a)
	r.mu.Unlock()
}

// release frees the slabs; the device is idle (Device.Close synchronized).
func (r *records) release(d *Device) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, s := range r.slabs {
		errs = append(errs, d.call1(&d.c.HostFree, s))
	}
	r.slabs, r.free = nil, nil
	return errors.Join(errs...)
}

// pendingRecord is a launch's violation record on its way to the host.
type pendingRecord struct {
	host uintptr // the slot
	m    *loadedModule
}

// readRecord reads the slot at host. The memory is the driver's, never
// moved by the collector; reading the address through a pointer variable
// avoids the integer-to-pointer conversion go vet questions.
func readRecord(host uintptr) [kabi.DebugWords]uint64 {
	return *(*[kabi.DebugWords]uint64)(*(*unsafe.Pointer)(unsafe.Pointer(&host)))
}

// violation is the error a record reports, nil if it is clear.
func (m *loadedModule) violation(rec [kabi.DebugWords]uint64) error {
	return kabi.Violation(m.kernel, m.sites, rec)
}

// recordOffset is where the violation record starts in the temporaries.
func (m *loadedModule) recordOffset() uint64 { return uint64(m.numTemps) * 8 }

// clearRecord zeroes the launch's record in the order of s. It runs inside
// d.enter/leave.
func (l *launch) clearRecord(d *Device, s *stream) error {
	f := getFrame()
	f.a[0], f.a[1], f.a[2], f.a[3] = uintptr(l.temps+l.m.recordOffset()), 0, recordBytes, s.h
	r := res(purego.SyscallN(d.c.MemsetD8Async.Addr, f.a[:4]...))
	putFrame(f)
	return d.check(&d.c.MemsetD8Async, r)
}

// sendRecord copies the launch's record to a host slot in the order of bs
// and leaves the slot with the stream.
func (l *launch) sendRecord(d *Device, bs backend.Stream) error {
	s, ok := bs.(*stream)
	if !ok || s == nil || s.d != d {
		return nil // End reports the bad stream
	}
	if err := d.enter(); err != nil {
		return err
	}
	slot, err := d.records.get(d)
	if err == nil {
		f := getFrame()
		f.a[0], f.a[1], f.a[2], f.a[3] = slot, uintptr(l.temps+l.m.recordOffset()), recordBytes, s.h
		r := res(purego.SyscallN(d.c.CopyDtoHAsync.Addr, f.a[:4]...))
		putFrame(f)
		if err = d.check(&d.c.CopyDtoHAsync, r); err != nil {
			d.records.put(slot)
		}
	}
	d.leave()
	if err != nil {
		return err
	}
	s.pmu.Lock()
	s.pending = append(s.pending, pendingRecord{host: slot, m: l.m})
	full := len(s.pending) >= maxPending
	s.pmu.Unlock()
	if full {
		err := d.run(&d.c.StreamSynchronize, s.args)
		s.harvest(err == nil, true)
		return err
	}
	return nil
}

// harvest takes the stream's slots back and returns the first violation
// among them and any kept from before. With read false (the work failed
// and the copies may not have run) it only frees the slots. With keep, a
// violation found is kept for the next call instead of returned.
func (s *stream) harvest(read, keep bool) error {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	err := s.kept
	s.kept = nil
	for _, p := range s.pending {
		if read && err == nil {
			if v := p.m.violation(readRecord(p.host)); v != nil {
				err = v
			}
		}
		s.d.records.put(p.host)
	}
	clear(s.pending)
	s.pending = s.pending[:0]
	if keep {
		s.kept, err = err, nil
	}
	return err
}
