package vulkan

// Copies between host and device memory on a GPU's copy engines. Where
// the device has a queue family for transfers alone, its queues are
// created beside the compute ones, buffers are shared by both families,
// and a stream's copies to and from host memory are submitted to transfer
// queues, ordered by the stream's semaphore as its other submits are: so a
// chunk's copy on one stream runs while another stream's kernel runs, as
// CUDA's copy engines do. Copies in and copies out take different queues
// where there are two or more, as CUDA gives each direction an engine.
// Where there is none (lavapipe), copies stay on the stream's compute
// queue.
//
// On NVIDIA's driver (H200, 580.159.04) the demo's overlap of 4 streams
// over one went from 1.05x with every copy on the compute queues to 1.18x
// with both directions on one transfer queue per stream and 1.35-1.38x
// with a queue per direction (copies in alone on transfer queues: 1.25x,
// copies out alone: 1.31x); CUDA's copy engines reach 2.22x there. The
// driver's one transfer family has two queues, and copies of both
// directions did not run at once on them. In the suite's pipeline of
// qd bench (copy, kernel, copy on 4 streams against 1) the transfer
// queues give 2.02-2.08x, against 1.40x with copies in on the compute
// queues.

// route is the queue a submit goes to.
type route uint8

const (
	onCompute route = iota // the stream's compute queue
	copyIn                 // a transfer queue for copies into device memory
	copyOut                // one for copies out of it
)

// xferLocked is the stream's command buffers for route r, made at the
// first copy; the compute queue's where the device has no transfer queue.
func (s *Stream) xferLocked(r route) (*cmdPool, error) {
	d := s.d
	if len(d.copyQueues) == 0 {
		return &s.main, nil
	}
	if c := s.xfer[r-1]; c != nil {
		return c, nil
	}
	pool, err := d.vd.CreateCommandPoolFor(d.vd.CopyFamily)
	if err != nil {
		return nil, d.wrap(err)
	}
	n := uint32(len(d.copyQueues))
	i := uint32(0)
	if n >= 2 {
		// A pair of queues per stream, in and out, round robin.
		i = (2*uint32(s.id) + uint32(r-1)) % n
	}
	s.xfer[r-1] = &cmdPool{q: d.copyQueues[i], pool: pool}
	return s.xfer[r-1], nil
}

// hostReadBarrier records the barrier that makes a copy's writes
// available to the host, for a command buffer of the queue route r picks.
func (d *Device) hostReadBarrier(cb uintptr, r route) {
	if r != onCompute && len(d.copyQueues) > 0 {
		d.vd.CmdHostReadBarrierAfterCopy(cb)
		return
	}
	d.vd.CmdHostReadBarrier(cb)
}
