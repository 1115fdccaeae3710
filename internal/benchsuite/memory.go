package benchsuite

import (
	"fmt"
	"time"

	"github.com/quadrants-go/qd"
)

// Memory in stream order (docs/semantics.md#performance-bars): stream-ordered allocation, copies from
// page-locked HostArrays against the driver's own asynchronous copy, and a
// chunked copy → kernel → copy pipeline on 4 streams against 1.

// ndarraysOn: NewNdarrayOn (1 MiB, zeroed on the stream) + Close, host
// time per pair; bar ≤ 2 µs on a GPU.
func (s *suite) ndarraysOn() error {
	p := s.p
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	n := s.pick(200, 2000, 20000)
	d, err := best(5, func() (time.Duration, error) {
		t0 := time.Now()
		for range n {
			a, err := qd.NewNdarrayOn[float32](st, 1<<18)
			if err != nil {
				return 0, err
			}
			if err := a.Close(); err != nil {
				return 0, err
			}
		}
		total := time.Since(t0)
		return total / time.Duration(n), st.Synchronize()
	})
	if err != nil {
		return err
	}
	r := Row{Name: "Ndarray alloc+free (1 MiB, NewNdarrayOn + Close)", Value: us(d), Unit: "µs", Ratio: us(d) / 2,
		Note: fmt.Sprintf("host time, mean of %d, best of 5; memory reused on the stream, zero fill left to a first use; ratio = time / 2 µs", n)}
	if s.gpu {
		barLE(&r, 1)
	} else {
		r.Status = Info
	}
	s.add(r)

	// The same with a first use that reads the array, so the zero fill is
	// enqueued: a device copy out of it into another array.
	dst, err := qd.NewNdarrayOn[float32](st, 1<<18)
	if err != nil {
		return err
	}
	defer dst.Close()
	dr, err := best(5, func() (time.Duration, error) {
		t0 := time.Now()
		for range n {
			a, err := qd.NewNdarrayOn[float32](st, 1<<18)
			if err != nil {
				return 0, err
			}
			if err := dst.CopyFromOn(st, a); err != nil {
				return 0, err
			}
			if err := a.Close(); err != nil {
				return 0, err
			}
		}
		total := time.Since(t0)
		return total / time.Duration(n), st.Synchronize()
	})
	if err != nil {
		return err
	}
	s.add(Row{Name: "Ndarray alloc+read+free (1 MiB, NewNdarrayOn, CopyFromOn from it, Close)", Value: us(dr), Unit: "µs", Status: Info,
		Note: "host time; the first use that reads enqueues the zero fill, then the copy"})
	return nil
}

// hostCopies: 256 MiB host → device and device → host from a HostArray
// with qd's asynchronous copies, against the driver's asynchronous copy
// between the same kinds of memory through a second handle on the device;
// bar ≥ 0.9 each, on a GPU.
func (s *suite) hostCopies() error {
	if !s.gpu {
		s.skip("host→device copy from a HostArray", gpuOnly)
		s.skip("device→host copy into a HostArray", gpuOnly)
		return nil
	}
	p := s.p
	n := s.pick(1<<20, 1<<24, 1<<26) // float32: 256 MiB on the GPU
	bytes := 4 * n
	a, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	defer a.Close()
	h, err := qd.NewHostArray[float32](p, n)
	if err != nil {
		return err
	}
	defer h.Close()
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	reps := s.pick(2, 5, 10)
	up, err := s.timeKernel(st, reps, func() error { return a.CopyFromHostOn(st, h) })
	if err != nil {
		return err
	}
	down, err := s.timeKernel(st, reps, func() error { return a.CopyToHostOn(st, h) })
	if err != nil {
		return err
	}
	rawUp, rawDown, err := s.rawHostCopies(bytes, reps)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name    string
		qd, raw time.Duration
		fn      string
	}{
		{"host→device copy from a HostArray", up, rawUp, "CopyHtoDAsync"},
		{"device→host copy into a HostArray", down, rawDown, "CopyDtoHAsync"},
	} {
		bw, ref := float64(bytes)/c.qd.Seconds()/1e9, float64(bytes)/c.raw.Seconds()/1e9
		r := Row{Name: c.name, Value: bw, Unit: "GB/s", RefName: "raw async copy, page-locked", RefValue: ref, Ratio: bw / ref,
			Note: fmt.Sprintf("%d MiB, timing events, mean of %d", bytes>>20, reps)}
		barGE(&r, 0.9)
		s.add(r)
	}
	return nil
}

// rawHostCopies times the driver's asynchronous copies between page-locked
// host memory and device memory through the raw device handle.
func (s *suite) rawHostCopies(bytes, reps int) (up, down time.Duration, err error) {
	hb, err := s.raw.AllocHost(bytes)
	if err != nil {
		return 0, 0, err
	}
	defer hb.Close()
	db, err := s.raw.Alloc(bytes)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	rs, err := s.raw.NewStream(0)
	if err != nil {
		return 0, 0, err
	}
	defer rs.Close()
	time1 := func(copy func() error) (time.Duration, error) { return rawTime(s.raw, rs, reps, copy) }
	ptr := hb.Pointer()
	if up, err = time1(func() error { return db.CopyFromHost(rs, ptr, bytes) }); err != nil {
		return 0, 0, err
	}
	down, err = time1(func() error { return db.CopyToHost(rs, ptr, bytes) })
	return up, down, err
}

// pipeline: an array processed in chunks, each copied in from a HostArray,
// worked on by a kernel and copied back, with the chunks on 1 stream and
// round-robin on 4; bar: 4 streams ≥ 1.8 × 1 stream, on a GPU. The kernel's
// work per element (a polynomial of degree `work`) is set so that it takes
// about as long as a chunk's copy in, so that copies and compute can
// overlap.
func (s *suite) pipeline() error {
	p := s.p
	n := s.pick(1<<16, 1<<20, 1<<26)
	const chunks = 16
	k, err := benchKernel(p, "poly")
	if err != nil {
		return err
	}
	defer k.Close()
	a, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return err
	}
	defer a.Close()
	h, err := qd.NewHostArray[float32](p, n)
	if err != nil {
		return err
	}
	defer h.Close()
	streams := make([]*qd.Stream, 4)
	for i := range streams {
		if streams[i], err = p.NewStream(); err != nil {
			return err
		}
		defer streams[i].Close()
	}
	type view struct {
		a *qd.Ndarray[float32]
		h *qd.HostArray[float32]
	}
	views := make([]view, chunks)
	for c := range views {
		lo, hi := c*n/chunks, (c+1)*n/chunks
		if views[c].a, err = a.Rows(lo, hi); err != nil {
			return err
		}
		if views[c].h, err = h.Rows(lo, hi); err != nil {
			return err
		}
	}
	run := func(k *qd.Kernel, work int64, streams []*qd.Stream) (time.Duration, error) {
		t0 := time.Now()
		for c, v := range views {
			st := streams[c%len(streams)]
			if err := v.a.CopyFromHostOn(st, v.h); err != nil {
				return 0, err
			}
			if err := k.LaunchOn(st, v.a, work); err != nil {
				return 0, err
			}
			if err := v.a.CopyToHostOn(st, v.h); err != nil {
				return 0, err
			}
		}
		for _, st := range streams {
			if err := st.Synchronize(); err != nil {
				return 0, err
			}
		}
		return time.Since(t0), nil
	}
	// Calibrate: one chunk's copy against the kernel with a known amount
	// of work.
	one := streams[:1]
	copyT, err := best(3, func() (time.Duration, error) {
		t0 := time.Now()
		if err := views[0].a.CopyFromHostOn(one[0], views[0].h); err != nil {
			return 0, err
		}
		return time.Since(t0), one[0].Synchronize()
	})
	if err != nil {
		return err
	}
	// A probe long enough that the launch and the wait do not count: at 64
	// the kernel took about as long as its own launch and wait on the H100,
	// so the work came out between 23 and 45 from run to run and the
	// streams had little compute to overlap with the copies.
	const probe = 1024
	kernT, err := best(3, func() (time.Duration, error) {
		t0 := time.Now()
		if err := k.LaunchOn(one[0], views[0].a, int64(probe)); err != nil {
			return 0, err
		}
		return time.Since(t0), one[0].Synchronize()
	})
	if err != nil {
		return err
	}
	work := max(int64(float64(probe)*copyT.Seconds()/kernT.Seconds()), 1)
	serial, err := best(3, func() (time.Duration, error) { return run(k, work, one) })
	if err != nil {
		return err
	}
	parallel, err := best(3, func() (time.Duration, error) { return run(k, work, streams) })
	if err != nil {
		return err
	}
	r := Row{Name: "copy → kernel → copy pipeline, 4 streams vs 1", Value: serial.Seconds() / parallel.Seconds(), Unit: "×",
		RefName: "1 stream (ms)", RefValue: ms(serial), Ratio: serial.Seconds() / parallel.Seconds(),
		Note: fmt.Sprintf("%d chunks of %d float32 via HostArray and Rows views; 4 streams %.3f ms; kernel work %d", chunks, n/chunks, ms(parallel), work)}
	if s.gpu {
		barGE(&r, 1.8)
	} else {
		r.Status = Info
	}
	s.add(r)
	return nil
}
