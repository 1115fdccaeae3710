package cuda

import (
	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
)

var _ backend.Zeroer = (*buffer)(nil)

// Zero enqueues on s a fill of the whole buffer with zero bytes
// (cuMemsetD8Async): new Ndarrays start zeroed on every backend, and a
// device-side fill avoids staging gigabytes of zeros from the host.
func (b *buffer) Zero(bs backend.Stream) error {
	s, err := b.checkCopy(bs, 0, "Zero")
	if err != nil || b.n == 0 {
		return err
	}
	d := b.d
	if err := d.enter(); err != nil {
		return err
	}
	f := getFrame()
	f.a[0], f.a[1], f.a[2], f.a[3] = uintptr(b.ptr), 0, uintptr(b.n), s.h
	r := callRes(purego.SyscallN(d.sym.memsetD8Async, f.a[:4]...))
	putFrame(f)
	d.leave()
	return d.check("cuMemsetD8Async", r)
}
