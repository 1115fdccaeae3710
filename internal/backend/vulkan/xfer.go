package vulkan

// Copies between host and device memory on a GPU's copy engines. Where
// the device has a queue family for transfers alone, its queues are
// created beside the compute ones, buffers are shared by both families,
// and a stream's copies to and from host memory are submitted to a
// transfer queue of its own (round robin), ordered by the stream's
// semaphore as its other submits are: so a chunk's copy on one stream
// runs while another stream's kernel runs, as CUDA's copy engines do.
// Where there is none (lavapipe), copies stay on the stream's compute
// queue.

// xferLocked is the stream's transfer-queue command buffers, made at the
// first copy; the compute queue's where the device has no transfer queue.
func (s *Stream) xferLocked() (*cmdPool, error) {
	if s.xfer != nil {
		return s.xfer, nil
	}
	d := s.d
	if len(d.copyQueues) == 0 {
		return &s.main, nil
	}
	pool, err := d.vd.CreateCommandPoolFor(d.vd.CopyFamily)
	if err != nil {
		return nil, d.wrap(err)
	}
	q := d.copyQueues[int((d.nextCopy.Add(1)-1)%uint32(len(d.copyQueues)))]
	s.xfer = &cmdPool{q: q, pool: pool}
	return s.xfer, nil
}

// hostReadBarrier records the barrier that makes a copy's writes
// available to the host, for a command buffer of the queue submitTo(xfer)
// picks.
func (d *Device) hostReadBarrier(cb uintptr, xfer bool) {
	if xfer && len(d.copyQueues) > 0 {
		d.vd.CmdHostReadBarrierAfterCopy(cb)
		return
	}
	d.vd.CmdHostReadBarrier(cb)
}
