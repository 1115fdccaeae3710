package nccl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/cuda"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
	"github.com/quadrants-go/qd/internal/backend/hip"
	"github.com/quadrants-go/qd/internal/comm"
)

// Tests on a real GPU and NCCL (RCCL on AMD), with a communicator of one
// rank: every collective of one rank leaves its input unchanged, which is
// what they check, bit for bit. Multi-rank runs need several GPUs and
// processes; they belong to package comm's tests.

// openGPU opens device 0 of CUDA (else HIP) and its collective library,
// closing the device when t ends. Without them it skips, or fails under
// QD_GPU_RUN=1 (gputest.Required), so a GPU run cannot pass by skipping.
func openGPU(t testing.TB) (*gpu.Device, *Lib) {
	t.Helper()
	drv, err := cuda.Driver()
	if err != nil {
		hdrv, herr := hip.Driver()
		if herr == nil {
			drv, err = hdrv, nil
		} else {
			err = fmt.Errorf("%w; %v", err, herr)
		}
	}
	if err != nil {
		gputest.Unavailable(t, "CUDA or HIP", err)
	}
	d := gputest.Open(t, drv)
	lib, err := Load(d.Arch())
	if err != nil {
		if gputest.Required() {
			t.Fatalf("QD_GPU_RUN=1 but the %s device has no collective library: %v", d.Arch(), err)
		}
		t.Skipf("no collective library for %s: %v", d.Arch(), err)
	}
	return d, lib
}

// gpuComm is rank 0 of a communicator of one on d, closed when t ends.
func gpuComm(t testing.TB, d *gpu.Device, lib *Lib) *Comm {
	t.Helper()
	id, err := lib.NewUniqueID()
	if err != nil {
		t.Fatalf("NewUniqueID: %v", err)
	}
	c, err := lib.NewComm(d, 1, 0, id)
	if err != nil {
		t.Fatalf("NewComm: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func gpuStream(t testing.TB, d *gpu.Device) backend.Stream {
	t.Helper()
	s, err := d.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// upload makes a buffer holding data.
func upload(t testing.TB, d *gpu.Device, s backend.Stream, data []byte) backend.Buffer {
	t.Helper()
	b, err := d.Alloc(len(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	store(t, s, b, data)
	return b
}

func store(t testing.TB, s backend.Stream, b backend.Buffer, data []byte) {
	t.Helper()
	if err := b.CopyFromHost(s, unsafe.Pointer(&data[0]), len(data)); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
}

// download waits for s and reads n bytes of b.
func download(t testing.TB, s backend.Stream, b backend.Buffer, n int) []byte {
	t.Helper()
	out := make([]byte, n)
	if err := b.CopyToHost(s, unsafe.Pointer(&out[0]), n); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	return out
}

// values is n elements of dt, distinct and of both signs where the type
// has them, little-endian; seed varies them.
func values(dt comm.DType, n, seed int) []byte {
	b := make([]byte, n*dt.Size())
	for i := range n {
		v := i*7 + seed - n/2
		switch dt {
		case comm.Int8, comm.Uint8:
			b[i] = byte(v)
		case comm.Int32, comm.Uint32:
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v)))
		case comm.Int64, comm.Uint64:
			binary.LittleEndian.PutUint64(b[8*i:], uint64(int64(v)*1_000_000_007))
		case comm.Float32:
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)*0.375))
		case comm.Float64:
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(v)*0.1))
		}
	}
	return b
}

// sentinel is n bytes no result should hold.
func sentinel(n int) []byte { return bytes.Repeat([]byte{0xA5}, n) }

func TestGPUAllReduce(t *testing.T) {
	d, lib := openGPU(t)
	c := gpuComm(t, d, lib)
	s := gpuStream(t, d)
	t.Logf("%s on %s, rank %d of %d", lib, d.Describe(), c.Rank(), c.Size())
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("Rank, Size = %d, %d", c.Rank(), c.Size())
	}
	const n = 1027 // not a multiple of anything NCCL likes
	for _, dt := range []comm.DType{comm.Float32, comm.Float64, comm.Int32, comm.Int64, comm.Uint8} {
		for _, op := range []comm.Op{comm.Sum, comm.Prod, comm.Max, comm.Min, comm.Avg} {
			for _, inPlace := range []bool{false, true} {
				name := fmt.Sprintf("%v/%v/inplace=%v", dt, op, inPlace)
				in := values(dt, n, int(op))
				send := upload(t, d, s, in)
				recv := send
				if !inPlace {
					recv = upload(t, d, s, sentinel(len(in)))
				}
				call := comm.Call{Kind: comm.AllReduce, Send: send, Recv: recv, Count: n, DType: dt, Op: op, Name: name}
				if err := c.Run(s, []comm.Call{call}); err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				if got := download(t, s, recv, len(in)); !bytes.Equal(got, in) {
					t.Errorf("%s: the result differs from the input (one rank): got %x…, want %x…", name, got[:16], in[:16])
				}
			}
		}
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err: %v", err)
	}
}

func TestGPURootedAndGathers(t *testing.T) {
	d, lib := openGPU(t)
	c := gpuComm(t, d, lib)
	s := gpuStream(t, d)
	const n = 4096
	in := values(comm.Float32, n, 3)
	for _, tc := range []struct {
		name    string
		kind    comm.Kind
		inPlace bool
	}{
		{"Broadcast", comm.Broadcast, false},
		{"BroadcastInPlace", comm.Broadcast, true},
		{"Reduce", comm.Reduce, false},
		{"ReduceInPlace", comm.Reduce, true},
		{"AllGather", comm.AllGather, false},
		{"ReduceScatter", comm.ReduceScatter, false},
	} {
		send := upload(t, d, s, in)
		recv := send
		if !tc.inPlace {
			recv = upload(t, d, s, sentinel(len(in)))
		}
		// Root 0, Sum; with one rank AllGather's and ReduceScatter's
		// counts are the whole buffer.
		call := comm.Call{Kind: tc.kind, Send: send, Recv: recv, Count: n, DType: comm.Float32, Op: comm.Sum, Peer: 0, Name: tc.name}
		if err := c.Run(s, []comm.Call{call}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := download(t, s, recv, len(in)); !bytes.Equal(got, in) {
			t.Errorf("%s: the result differs from the input (one rank)", tc.name)
		}
	}
}

// A Send and a Recv to self in one batch meet (they are one group).
func TestGPUSendRecvSelf(t *testing.T) {
	d, lib := openGPU(t)
	c := gpuComm(t, d, lib)
	s := gpuStream(t, d)
	in := values(comm.Uint8, 1<<16, 9)
	a := upload(t, d, s, in)
	b := upload(t, d, s, sentinel(len(in)))
	err := c.Run(s, []comm.Call{
		{Kind: comm.Send, Send: a, Count: len(in), DType: comm.Uint8, Peer: 0, Name: "SendTo"},
		{Kind: comm.Recv, Recv: b, Count: len(in), DType: comm.Uint8, Peer: 0, Name: "RecvFrom"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := download(t, s, b, len(in)); !bytes.Equal(got, in) {
		t.Error("the received bytes differ from the sent ones")
	}
}

// An int16 call is refused before its batch's other calls are enqueued.
func TestGPUInt16Refused(t *testing.T) {
	d, lib := openGPU(t)
	c := gpuComm(t, d, lib)
	s := gpuStream(t, d)
	in := values(comm.Int32, 256, 1)
	a := upload(t, d, s, in)
	b := upload(t, d, s, sentinel(len(in)))
	err := c.Run(s, []comm.Call{
		{Kind: comm.AllReduce, Send: a, Recv: b, Count: 256, DType: comm.Int32, Name: "ok"},
		{Kind: comm.AllReduce, Send: a, Recv: a, Count: 256, DType: comm.Int16, Name: "AllReduceOn"},
	})
	if !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("Run: %v", err)
	}
	t.Log(err)
	if got := download(t, s, b, len(in)); !bytes.Equal(got, sentinel(len(in))) {
		t.Error("the batch's first call ran although the batch was refused")
	}
	if err := c.Err(); err != nil {
		t.Errorf("the refusal broke the transport: %v", err)
	}
}

func TestGPUAbort(t *testing.T) {
	d, lib := openGPU(t)
	c := gpuComm(t, d, lib)
	s := gpuStream(t, d)
	a := upload(t, d, s, values(comm.Float32, 64, 0))
	call := comm.Call{Kind: comm.AllReduce, Send: a, Recv: a, Count: 64, DType: comm.Float32}
	if err := c.Run(s, []comm.Call{call}); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("test abort")
	c.Abort(cause)
	c.Abort(errors.New("again"))
	if err := c.Run(s, []comm.Call{call}); !errors.Is(err, cause) {
		t.Errorf("Run after Abort: %v", err)
	}
	if err := c.Err(); !errors.Is(err, cause) {
		t.Errorf("Err after Abort: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The device is still usable.
	if err := s.Synchronize(); err != nil {
		t.Errorf("Synchronize after the abort: %v", err)
	}
}

func TestGPUCloseTwice(t *testing.T) {
	d, lib := openGPU(t)
	id, err := lib.NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	c, err := lib.NewComm(d, 1, 0, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	s := gpuStream(t, d)
	a := upload(t, d, s, values(comm.Float32, 4, 0))
	if err := c.Run(s, []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: 4, DType: comm.Float32}}); !errors.Is(err, backend.ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
}

// An all-reduce captured into a graph replays, reading its buffers'
// contents of each replay.
func TestGPUCapture(t *testing.T) {
	d, lib := openGPU(t)
	c := gpuComm(t, d, lib)
	s := gpuStream(t, d)
	const n = 1024
	send := upload(t, d, s, values(comm.Float32, n, 0))
	recv := upload(t, d, s, sentinel(4*n))
	// Outside a capture first: NCCL sets up its connections on a
	// communicator's first use.
	call := comm.Call{Kind: comm.AllReduce, Send: send, Recv: recv, Count: n, DType: comm.Float32, Op: comm.Sum, Name: "captured"}
	if err := c.Run(s, []comm.Call{call}); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := d.BeginCapture(s); err != nil {
		t.Fatalf("BeginCapture: %v", err)
	}
	rerr := c.Run(s, []comm.Call{call})
	g, err := d.EndCapture(s)
	if rerr != nil || err != nil {
		t.Fatalf("capture: Run %v, EndCapture %v", rerr, err)
	}
	defer g.Close()
	x, err := g.Instantiate()
	if err != nil {
		t.Fatalf("Instantiate: %v", err)
	}
	defer x.Close()
	for replay := 1; replay <= 2; replay++ {
		in := values(comm.Float32, n, 100*replay)
		store(t, s, send, in)
		store(t, s, recv, sentinel(4*n))
		if err := x.Launch(s); err != nil {
			t.Fatalf("replay %d: %v", replay, err)
		}
		if got := download(t, s, recv, 4*n); !bytes.Equal(got, in) {
			t.Errorf("replay %d: the result is not this replay's input", replay)
		}
	}
}

// Run with one call allocates nothing (the host-cost bar of a small
// all-reduce), nor does RawAllReduce.
func TestGPURunAllocs(t *testing.T) {
	d, lib := openGPU(t)
	c := gpuComm(t, d, lib)
	s := gpuStream(t, d)
	a := upload(t, d, s, values(comm.Float32, 1024, 0))
	calls := []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: 1024, DType: comm.Float32, Op: comm.Sum}}
	var runErr error
	if n := testing.AllocsPerRun(200, func() {
		if err := c.Run(s, calls); err != nil {
			runErr = err
		}
	}); n != 0 {
		t.Errorf("Run allocates %v times per call", n)
	}
	p, _ := d.BufferAddress(a)
	st, _ := d.StreamHandle(s)
	if n := testing.AllocsPerRun(200, func() {
		if err := c.RawAllReduce(p, p, 1024, comm.Float32, comm.Sum, st); err != nil {
			runErr = err
		}
	}); n != 0 {
		t.Errorf("RawAllReduce allocates %v times per call", n)
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	// The host cost against the raw call, for the log (the benchmark is
	// the measurement).
	qd := hostCost(t, s, 2000, func() error { return c.Run(s, calls) })
	raw := hostCost(t, s, 2000, func() error { return c.RawAllReduce(p, p, 1024, comm.Float32, comm.Sum, st) })
	t.Logf("4 KiB all-reduce host cost: Run %v, raw %v (%.2f×)", qd, raw, float64(qd)/float64(raw))
}

func hostCost(t *testing.T, s backend.Stream, n int, f func() error) time.Duration {
	t.Helper()
	var total time.Duration
	for i := range n {
		start := time.Now()
		if err := f(); err != nil {
			t.Fatal(err)
		}
		total += time.Since(start)
		if i%100 == 99 {
			if err := s.Synchronize(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	return total / time.Duration(n)
}

// BenchmarkAllReduce4KiB is the host cost of one in-place 4 KiB float32
// all-reduce through Run ("qd") and straight through the binding ("raw"),
// waiting for the stream every 100 calls.
func BenchmarkAllReduce4KiB(b *testing.B) {
	d, lib := openGPU(b)
	c := gpuComm(b, d, lib)
	s := gpuStream(b, d)
	const n = 1024
	a := upload(b, d, s, values(comm.Float32, n, 0))
	p, err := d.BufferAddress(a)
	if err != nil {
		b.Fatal(err)
	}
	st, err := d.StreamHandle(s)
	if err != nil {
		b.Fatal(err)
	}
	calls := []comm.Call{{Kind: comm.AllReduce, Send: a, Recv: a, Count: n, DType: comm.Float32, Op: comm.Sum}}
	bench := func(b *testing.B, f func() error) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := f(); err != nil {
				b.Fatal(err)
			}
			if i%100 == 99 {
				if err := s.Synchronize(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := s.Synchronize(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("qd", func(b *testing.B) { bench(b, func() error { return c.Run(s, calls) }) })
	b.Run("raw", func(b *testing.B) {
		bench(b, func() error { return c.RawAllReduce(p, p, n, comm.Float32, comm.Sum, st) })
	})
}
