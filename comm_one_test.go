package qd

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/comm"
)

// TestCommGroupOfOne runs every collective in a group of one on every
// backend present: NCCL's size-1 communicator on a GPU (what one GPU can
// verify), the CPU transport without a network. Vulkan has no collectives.
func TestCommGroupOfOne(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		c, err := NewComm(p, CommRank(0, 1, ""))
		if p.Arch() == Vulkan {
			wantErr(t, err, ErrUnsupported)
			return
		}
		check(t, err)
		defer c.Close()
		s := newStream(t, p)
		vals := []float32{1.5, -2, 3, 0}
		x := newNdarray[float32](t, p, 4)
		check(t, x.CopyFromHost(vals))
		dst := newNdarray[float32](t, p, 4)
		for _, op := range []ReduceOp{Sum, Prod, Max, Min, Avg} {
			check(t, c.AllReduceOn(s, x, op))
			check(t, c.AllReduceIntoOn(s, dst, x, op))
		}
		check(t, c.BroadcastOn(s, x, 0))
		check(t, c.ReduceOn(s, x, Sum, 0))
		all := newNdarray[float32](t, p, 4)
		check(t, c.AllGatherOn(s, all, x))
		part := newNdarray[float32](t, p, 4)
		check(t, c.ReduceScatterOn(s, part, all, Max))
		back := newNdarray[float32](t, p, 4)
		check(t, c.Group(func(g *Comm) error {
			return errors.Join(g.SendOn(s, part, 0), g.RecvOn(s, back, 0))
		}))
		for name, a := range map[string]*Ndarray[float32]{"x": x, "dst": dst, "all": all, "part": part, "back": back} {
			if got := toSlice(t, a); fmt.Sprint(got) != fmt.Sprint(vals) {
				t.Errorf("%s = %v, want %v", name, got, vals)
			}
		}
		// Integers and vectors, in a graph replayed twice.
		iv := newNdarray[[2]int64](t, p, 3)
		check(t, iv.CopyFromHost([][2]int64{{1, 2}, {3, 4}, {5, 6}}))
		g := captureGraph(t, s, func() error { return c.AllReduceOn(s, iv, Max) })
		check(t, g.LaunchOn(s))
		check(t, g.LaunchOn(s))
		check(t, s.Synchronize())
		g.Close()
		if got := toSlice(t, iv); fmt.Sprint(got) != "[[1 2] [3 4] [5 6]]" {
			t.Errorf("vectors after two replays: %v", got)
		}
		// NCCL has no 16-bit integers.
		h := newNdarray[int16](t, p, 2)
		err = c.AllReduceOn(s, h, Sum)
		if p.Arch() == CPU {
			check(t, err)
		} else {
			wantErr(t, err, ErrUnsupported)
		}
		check(t, s.Synchronize())
		// Abort: the Comm is broken for later calls and for a Synchronize
		// of a stream that had its calls.
		check(t, c.AllReduceOn(s, x, Sum))
		c.Abort()
		if err := s.Synchronize(); p.Arch() != CPU && !errors.Is(err, ErrCommBroken) {
			t.Errorf("Synchronize after Abort: %v, want ErrCommBroken", err)
		}
		if err := c.AllReduceOn(s, x, Sum); !errors.Is(err, ErrCommBroken) || !strings.Contains(err.Error(), "Comm.Abort") {
			t.Errorf("a call after Abort: %v, want ErrCommBroken saying why", err)
		}
		check(t, c.Close())
		check(t, c.Close())
	})
}

// BenchmarkCommAllReduce4KiB is the host cost of a 4 KiB all-reduce
// through a Comm beside a raw ncclAllReduce through the same bindings
// (bar: ≤ 1.2×), on a group of one on the GPU.
//
//	QD_GPU_RUN=1 go test -run XXX -bench CommAllReduce4KiB
func BenchmarkCommAllReduce4KiB(b *testing.B) {
	p, err := Init(WithArch(CUDA))
	if err != nil {
		if os.Getenv("QD_GPU_RUN") == "1" {
			b.Fatalf("QD_GPU_RUN=1 but CUDA is unavailable: %v", err)
		}
		b.Skipf("no CUDA: %v", err)
	}
	defer p.Close()
	c, err := NewComm(p, CommRank(0, 1, ""))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s := newStream(b, p)
	x := newNdarray[float32](b, p, 1024)
	d := p.dev.(*gpu.Device)
	nc := c.c.t.(*ncclTransport).nc
	addr, _ := d.BufferAddress(x.c.buf)
	h, _ := d.StreamHandle(s.c.b)
	const syncEvery = 100
	b.Run("qd", func(b *testing.B) {
		for i := range b.N {
			if err := c.AllReduceOn(s, x, Sum); err != nil {
				b.Fatal(err)
			}
			if i%syncEvery == syncEvery-1 {
				s.Synchronize()
			}
		}
		s.Synchronize()
	})
	b.Run("raw", func(b *testing.B) {
		for i := range b.N {
			if err := nc.RawAllReduce(addr, addr, 1024, comm.Float32, comm.Sum, h); err != nil {
				b.Fatal(err)
			}
			if i%syncEvery == syncEvery-1 {
				s.Synchronize()
			}
		}
		s.Synchronize()
	})
	// Both in one run, interleaved rounds: the ratio the bar judges.
	var qdT, rawT time.Duration
	for range 5 {
		t0 := time.Now()
		for range 2000 {
			c.AllReduceOn(s, x, Sum)
		}
		qdT += time.Since(t0)
		s.Synchronize()
		t0 = time.Now()
		for range 2000 {
			nc.RawAllReduce(addr, addr, 1024, comm.Float32, comm.Sum, h)
		}
		rawT += time.Since(t0)
		s.Synchronize()
	}
	b.Logf("4 KiB all-reduce host cost: qd %v, raw ncclAllReduce %v per call: %.2f× (bar ≤ 1.2)", qdT/10000, rawT/10000, float64(qdT)/float64(rawT))
}
