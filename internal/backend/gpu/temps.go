package gpu

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Per-launch temporaries.
//
// A kernel whose locals live across tasks needs NumTemps×8 bytes of device
// memory per launch, taken and given back in the order of the launch stream
// so that concurrent launches of the same kernel never share it.
//
// Where the device has stream-ordered memory pools (Props.MemPools) that is
// MemAllocAsync/MemFreeAsync on the stream. Without them, tempPool keeps a
// free list of MemAlloc'd blocks: End records the block's own event on the
// stream and returns the block to the list; Begin takes a block only once a
// query of that event says the launch that used it is done, else allocates
// a new one. This is the simplest scheme that is correct without
// stream-ordered allocation; the list grows to the number of launches with
// temporaries in flight at once.

// tempBlock is one recycled temporaries block.
type tempBlock struct {
	ptr  uint64
	size int
	ev   uintptr // an event without timing, recorded by End
	used bool    // ev has been recorded at least once
}

// tempPool is the free list. Its methods run inside d.enter/leave.
type tempPool struct {
	d    *Device
	mu   sync.Mutex
	free []*tempBlock
	all  []*tempBlock
}

// maxTempScan bounds the event queries one acquire makes before it gives up
// on the free list and allocates.
const maxTempScan = 4

// acquire returns a block of at least size bytes that no enqueued work uses.
func (p *tempPool) acquire(size int) (*tempBlock, error) {
	d := p.d
	p.mu.Lock()
	scanned := 0
	for i := 0; i < len(p.free) && scanned < maxTempScan; i++ {
		b := p.free[i]
		if b.size < size {
			continue
		}
		scanned++
		if b.used {
			f := getFrame() // a literal-argument SyscallN would allocate
			f.a[0] = b.ev
			r := res(purego.SyscallN(d.c.EventQuery.Addr, f.a[:1]...))
			putFrame(f)
			if r == d.codes.NotReady {
				continue
			}
			if err := d.check(&d.c.EventQuery, r); err != nil {
				p.mu.Unlock()
				return nil, err
			}
		}
		p.free = append(p.free[:i], p.free[i+1:]...)
		p.mu.Unlock()
		return b, nil
	}
	p.mu.Unlock()

	b := &tempBlock{size: max(size, 256)}
	if err := d.check(&d.c.MemAlloc, res(purego.SyscallN(d.c.MemAlloc.Addr, uintptr(unsafe.Pointer(&b.ptr)), uintptr(b.size)))); err != nil {
		return nil, err
	}
	if err := d.check(&d.c.EventCreate, res(purego.SyscallN(d.c.EventCreate.Addr, uintptr(unsafe.Pointer(&b.ev)), d.codes.EventDisableTiming))); err != nil {
		d.call1(&d.c.MemFree, uintptr(b.ptr))
		return nil, err
	}
	p.mu.Lock()
	p.all = append(p.all, b)
	p.mu.Unlock()
	return b, nil
}

// put records b's event on stream (0: b is unused, no record needed) and
// returns b to the free list.
func (p *tempPool) put(b *tempBlock, stream uintptr) error {
	d := p.d
	var err error
	if stream != 0 {
		f := getFrame()
		f.a[0], f.a[1] = b.ev, stream
		r := res(purego.SyscallN(d.c.EventRecord.Addr, f.a[:2]...))
		putFrame(f)
		if err = d.check(&d.c.EventRecord, r); err == nil {
			b.used = true
		} else {
			// The block's last use cannot be tracked: wait for all work.
			err = errors.Join(err, d.call0(&d.c.Synchronize))
			b.used = false
		}
	}
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
	return err
}

// release frees every block; the device is idle (Device.Close synchronized).
func (p *tempPool) release() error {
	d := p.d
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []error
	for _, b := range p.all {
		errs = append(errs, d.call1(&d.c.EventDestroy, b.ev), d.call1(&d.c.MemFree, uintptr(b.ptr)))
	}
	p.all, p.free = nil, nil
	return errors.Join(errs...)
}
