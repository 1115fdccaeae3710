package benchsuite

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

const peerCopyRow = "peer copy, device 0 → 1"

// peerCopy: a copy from an array of device 0 into one of device 1
// (Ndarray.CopyFromOn between a Program on each device, on a stream of
// device 0) against the driver's peer copy of the same bytes between
// buffers of the same devices on a stream of device 0 (RawPeerCopier),
// both timed by timing events of device 0; bar ≥ 0.9. qd's copy runs
// first, so peer access is enabled for both. It needs a second device of
// the backend and is skipped without one.
func (s *suite) peerCopy() error {
	if !s.gpu {
		s.skip(peerCopyRow, gpuOnly)
		return nil
	}
	q, err := qd.Init(qd.WithArch(s.p.Arch()), qd.WithDevice(1))
	if errors.Is(err, qd.ErrInvalidArgument) {
		s.skip(peerCopyRow, "needs two devices: "+err.Error())
		return nil
	}
	if err != nil {
		return err
	}
	defer q.Close()
	n := s.pick(1<<20, 1<<24, 1<<26) // float32: 256 MiB on the GPU
	bytes := 4 * n
	src, err := qd.NewNdarray[float32](s.p, n)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := qd.NewNdarray[float32](q, n)
	if err != nil {
		return err
	}
	defer dst.Close()
	st, err := s.p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	reps := s.pick(2, 5, 20)
	mine, err := s.timeKernel(st, reps, func() error { return dst.CopyFromOn(st, src) })
	if err != nil {
		return err
	}
	raw, err := s.rawPeerCopy(bytes, reps)
	if err != nil {
		return err
	}
	direct := "staged through host memory (no peer access)"
	if slices.Contains(s.p.Device().Peers, 1) {
		direct = "direct (peer access)"
	}
	bw, ref := float64(bytes)/mine.Seconds()/1e9, float64(bytes)/raw.Seconds()/1e9
	r := Row{Name: peerCopyRow, Value: bw, Unit: "GB/s", RefName: "raw " + s.driverFn(func(c *gpu.Calls) *gpu.Fn { return &c.CopyPeerAsync }),
		RefValue: ref, Ratio: bw / ref, Note: fmt.Sprintf("%d MiB, %s, timing events, mean of %d", bytes>>20, direct, reps)}
	barGE(&r, 0.9)
	s.add(r)
	return nil
}

// rawPeerCopy times the driver's peer copy of bytes from a buffer of the
// raw handle on device 0 into one of a raw handle on device 1, on a stream
// of device 0: the mean of reps copies, by timing events.
func (s *suite) rawPeerCopy(bytes, reps int) (time.Duration, error) {
	rp, ok := s.raw.(backend.RawPeerCopier)
	if !ok {
		return 0, fmt.Errorf("the %s backend has no raw peer copy", s.p.Arch())
	}
	b, _ := backend.Lookup(s.p.Arch().String())
	raw1, err := b.Open(1)
	if err != nil {
		return 0, err
	}
	defer raw1.Close()
	from, err := s.raw.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	defer from.Close()
	to, err := raw1.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	defer to.Close()
	rs, err := s.raw.NewStream(0)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	return rawTime(s.raw, rs, reps, func() error { return rp.RawCopyPeer(rs, to, from, bytes) })
}

// rawTime is the mean device time of reps runs of op on rs, a stream of
// d, by timing events of d, after one run to warm up.
func rawTime(d backend.Device, rs backend.Stream, reps int, op func() error) (time.Duration, error) {
	e0, err := d.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer e0.Close()
	e1, err := d.NewEvent(true)
	if err != nil {
		return 0, err
	}
	defer e1.Close()
	if err := op(); err != nil {
		return 0, err
	}
	if err := e0.Record(rs); err != nil {
		return 0, err
	}
	for range reps {
		if err := op(); err != nil {
			return 0, err
		}
	}
	if err := e1.Record(rs); err != nil {
		return 0, err
	}
	if err := e1.Synchronize(); err != nil {
		return 0, err
	}
	t, err := e0.Elapsed(e1)
	return t / time.Duration(reps), err
}
