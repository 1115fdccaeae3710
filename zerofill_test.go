package qd

import (
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/lower"
)

// NewNdarrayOn's zero fill is enqueued by the first use (zerofill.go). On
// GPUs that path is live; on the CPU, whose memory is host memory born
// zeroed, the tests run it over lazyDevice: the CPU backend with
// stream-ordered buffers that start full of garbage, are not host
// addressable, and count their fills.

// lazyDevice wraps a device so that AllocOn's buffers need a fill.
type lazyDevice struct {
	backend.Device
	fills atomic.Int32 // Zero calls
}

// lazyBuffer is a buffer of the wrapped device, hiding its host pointer.
type lazyBuffer struct {
	backend.Buffer
	d *lazyDevice
}

type lazyModule struct{ backend.Module }

func (d *lazyDevice) AllocOn(s backend.Stream, n int) (backend.Buffer, error) {
	b, err := d.Device.AllocOn(s, n)
	if err != nil {
		return nil, err
	}
	if hp, ok := b.(backend.HostPointer); ok {
		for i := range unsafe.Slice((*byte)(hp.HostPointer()), n) {
			*(*byte)(unsafe.Add(hp.HostPointer(), i)) = 0xA5
		}
	}
	return &lazyBuffer{b, d}, nil
}

// BeginCapture and EndCapture are the CPU's: the graph tests run on
// lazyDevice too.
func (d *lazyDevice) BeginCapture(s backend.Stream) error {
	return d.Device.(backend.Capturer).BeginCapture(s)
}

func (d *lazyDevice) EndCapture(s backend.Stream) (backend.Graph, error) {
	return d.Device.(backend.Capturer).EndCapture(s)
}

func (d *lazyDevice) Compile(plan *lower.Plan, opts backend.CompileOptions) (backend.Module, error) {
	m, err := d.Device.Compile(plan, opts)
	return lazyModule{m}, err
}

func (m lazyModule) Begin(s backend.Stream, args *backend.Args) (backend.Launch, error) {
	for i := range args.Arrays {
		if lb, ok := args.Arrays[i].Buf.(*lazyBuffer); ok {
			args.Arrays[i].Buf = lb.Buffer
		}
	}
	return m.Module.Begin(s, args)
}

func (b *lazyBuffer) Zero(s backend.Stream) error {
	b.d.fills.Add(1)
	zeros := make([]byte, b.Bytes())
	return b.Buffer.CopyFromHost(s, unsafe.Pointer(&zeros[0]), len(zeros))
}

func (b *lazyBuffer) CopyFrom(s backend.Stream, src backend.Buffer, n int) error {
	return b.Buffer.CopyFrom(s, unlazy(src), n)
}

// unlazy is the wrapped device's buffer of b.
func unlazy(b backend.Buffer) backend.Buffer {
	if lb, ok := b.(*lazyBuffer); ok {
		return lb.Buffer
	}
	return b
}

func (d *lazyDevice) WaitPeerEvent(s backend.Stream, e backend.Event) error {
	return d.Device.(backend.Peer).WaitPeerEvent(s, e)
}

func (d *lazyDevice) CopyPeer(s backend.Stream, dst, src backend.Buffer, n int) error {
	return d.Device.(backend.Peer).CopyPeer(s, unlazy(dst), unlazy(src), n)
}

func (b *lazyBuffer) View(off, n int) (backend.Buffer, error) {
	v, err := b.Buffer.View(off, n)
	if err != nil {
		return nil, err
	}
	return &lazyBuffer{v, b.d}, nil
}

// forEachLazy runs f on every backend, the CPU through lazyDevice; fills
// reports the fills enqueued so far, or -1 where they are not counted.
func forEachLazy(t *testing.T, f func(t *testing.T, p *Program, fills func() int)) {
	t.Helper()
	forEachArch(t, func(t *testing.T, p *Program) {
		if p.Arch() != CPU {
			f(t, p, func() int { return -1 })
			return
		}
		b, _ := backend.Lookup(CPU.String())
		dev, err := b.Open(0)
		if err != nil {
			t.Fatal(err)
		}
		ld := &lazyDevice{Device: dev}
		lp, err := newProgram(ld, CPU, initConfig{arch: CPU})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { check(t, lp.Close()) }()
		f(t, lp, func() int { return int(ld.fills.Load()) })
	})
}

// addOneKernel: y[i] += 1 over len(y).
const addOneSrc = `package k

//qd:kernel
func addOne(y []float32) {
	for i := range len(y) {
		y[i] += 1
	}
}
`

func TestLazyZeroFill(t *testing.T) {
	forEachLazy(t, func(t *testing.T, p *Program, fills func() int) {
		m := compileModule(t, p, addOneSrc)
		addOne := kernelOf(t, m, "addOne")
		s1 := newStream(t, p)
		s2 := newStream(t, p)
		const n = 1000
		wantFills := func(what string, want int) {
			t.Helper()
			if got := fills(); got >= 0 && got != want {
				t.Errorf("%s: %d fills enqueued, want %d", what, got, want)
			}
		}
		values := func(what string, a *Ndarray[float32], want func(i int) float32) {
			t.Helper()
			got := toSlice(t, a)
			for i, v := range got {
				if v != want(i) {
					t.Fatalf("%s: element %d = %v, want %v", what, i, v, want(i))
				}
			}
		}
		zero := func(int) float32 { return 0 }

		// Closed unused: no fill.
		a := newNdarrayOn[float32](t, s1, n)
		check(t, a.Close())
		wantFills("closed unused", 0)

		// Read by the host: zeros.
		a = newNdarrayOn[float32](t, s1, n)
		values("host read", a, zero)
		wantFills("host read", 1)
		check(t, a.Close())

		// Overwritten by a whole copy, a whole fill, a device copy: no fill.
		h := newHostArray[float32](t, p, n)
		hs := hostData(t, h)
		for i := range hs {
			hs[i] = float32(i)
		}
		a = newNdarrayOn[float32](t, s1, n)
		check(t, a.CopyFromHostOn(s1, h))
		values("whole copy in", a, func(i int) float32 { return float32(i) })
		b := newNdarrayOn[float32](t, s1, n)
		check(t, b.FillOn(s1, 7))
		values("whole fill", b, func(int) float32 { return 7 })
		c := newNdarrayOn[float32](t, s1, n)
		check(t, c.CopyFromOn(s1, a))
		values("device copy in", c, func(i int) float32 { return float32(i) })
		wantFills("overwrites", 1)

		// A kernel on another stream, ordered after the allocation only.
		d := newNdarrayOn[float32](t, s1, n)
		check(t, s2.WaitStream(s1))
		check(t, addOne.LaunchOn(s2, d))
		values("kernel on another stream", d, func(int) float32 { return 1 })
		wantFills("kernel", 2)

		// Part of the array written through a view: the rest stays zero.
		e := newNdarrayOn[float32](t, s1, 10, 100)
		v := must(e.Rows(2, 3))(t)
		check(t, v.FillOn(s1, 3))
		values("view fill", e, func(i int) float32 {
			if i/100 == 2 {
				return 3
			}
			return 0
		})
		wantFills("view", 3)

		// The source of a device copy is filled before it is read.
		f := newNdarrayOn[float32](t, s1, n)
		check(t, c.CopyFromOn(s1, f))
		values("copy from a new array", c, zero)
		wantFills("copy source", 4)

		// First uses on two streams at once, each ordered after the
		// allocation only: one fill, and both kernels see it.
		g := newNdarrayOn[float32](t, s1, n)
		o1 := newNdarrayOn[float32](t, s1, n)
		o2 := newNdarrayOn[float32](t, s1, n)
		check(t, o1.FillOn(s1, 0))
		check(t, o2.FillOn(s1, 0))
		check(t, s2.WaitStream(s1))
		mc := compileModule(t, p, copySrc)
		cp := kernelOf(t, mc, "copyTo")
		var wg sync.WaitGroup
		for _, st := range []struct {
			s   *Stream
			out *Ndarray[float32]
		}{{s1, o1}, {s2, o2}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := cp.LaunchOn(st.s, g, st.out); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		values("first reader on s1", o1, zero)
		values("first reader on s2", o2, zero)
		wantFills("two first readers", 5)
		for _, x := range []*Ndarray[float32]{b, c, d, e, f, g, o1, o2, a} {
			check(t, x.Close())
		}
		check(t, h.Close())
	})
}

const copySrc = `package k

//qd:kernel
func copyTo(x, y []float32) {
	for i := range len(y) {
		y[i] = x[i]
	}
}
`
