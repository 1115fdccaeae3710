package vulkan

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// TestCaptureReplay captures three saxpy launches and a copy on one
// stream, replays the graph twice on two streams, and checks the result
// of the five replays' worth of work against Go's arithmetic.
func TestCaptureReplay(t *testing.T) {
	d := openTestDevice(t)
	plan, err := lower.Lower(suitekernels.Saxpy())
	if err != nil {
		t.Fatal(err)
	}
	mod, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close()
	s1, s2 := newStream(t, d), newStream(t, d)
	const n = 4099
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%7), float32(i)
	}
	bx, by, bz := alloc(t, d, 4*n), alloc(t, d, 4*n), alloc(t, d, 4*n)
	if err := bx.CopyFromHost(s1, unsafe.Pointer(&x[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	if err := by.CopyFromHost(s1, unsafe.Pointer(&y[0]), 4*n); err != nil {
		t.Fatal(err)
	}
	args := &backend.Args{Scalars: []uint64{uint64(math.Float32bits(2)), 0, 0},
		Arrays: []backend.ArrayArg{{}, {Buf: bx, Shape: [4]int{n, 1, 1, 1}}, {Buf: by, Shape: [4]int{n, 1, 1, 1}}}}
	if err := d.BeginCapture(s1); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l, err := mod.Begin(s1, args)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Run(0, s1); err != nil {
			t.Fatal(err)
		}
		l.End(s1)
	}
	if err := bz.CopyFrom(s1, by, 4*n); err != nil {
		t.Fatal(err)
	}
	if err := s1.Synchronize(); !errors.Is(err, backend.ErrCapturing) {
		t.Fatalf("Synchronize of a capturing stream: %v", err)
	}
	g, err := d.EndCapture(s1)
	if err != nil {
		t.Fatal(err)
	}
	x1, err := g.Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	// Nothing ran during the capture.
	got := read(t, s1, by, 4*n)
	if v := *(*float32)(unsafe.Pointer(&got[4])); v != y[1] {
		t.Fatalf("y[1] = %v after the capture, want %v: the capture ran its work", v, y[1])
	}
	for _, s := range []*Stream{s1, s2} {
		if err := x1.Launch(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := s2.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if err := x1.Close(); err != nil {
		t.Fatal(err)
	}
	gotZ := read(t, s1, bz, 4*n)
	for i := range n {
		want := y[i]
		for range 6 {
			want = 2*x[i] + want
		}
		if v := *(*float32)(unsafe.Pointer(&gotZ[4*i])); v != want {
			t.Fatalf("z[%d] = %v after two replays, want %v", i, v, want)
		}
	}
}

// TestCaptureForkJoin forks two streams from the origin of a capture,
// each filling and copying its own buffer, joins them back and replays:
// each lane's commands run in their order, after the fork.
func TestCaptureForkJoin(t *testing.T) {
	d := openTestDevice(t)
	origin, a, b := newStream(t, d), newStream(t, d), newStream(t, d)
	const n = 1 << 12
	src, da, db := alloc(t, d, n), alloc(t, d, n), alloc(t, d, n)
	fork, ja, jb := newEvent(t, d, false), newEvent(t, d, false), newEvent(t, d, false)
	if err := d.BeginCapture(origin); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(src.Fill(origin, 7, 1, n))
	must(fork.Record(origin))
	must(a.WaitEvent(fork))
	must(b.WaitEvent(fork))
	must(da.CopyFrom(a, src, n))
	must(da.Fill(a, 9, 1, n/2))
	must(db.CopyFrom(b, src, n))
	must(ja.Record(a))
	must(jb.Record(b))
	// The origin is not joined back yet: EndCapture would refuse; join.
	must(origin.WaitEvent(ja))
	must(origin.WaitEvent(jb))
	g, err := d.EndCapture(origin)
	must(err)
	defer g.Close()
	x, err := g.Instantiate()
	must(err)
	must(x.Launch(origin))
	must(origin.Synchronize())
	must(x.Close())
	ga, gb := read(t, origin, da, n), read(t, origin, db, n)
	for i := range n {
		wa := byte(7)
		if i < n/2 {
			wa = 9
		}
		if ga[i] != wa || gb[i] != 7 {
			t.Fatalf("byte %d: a %d (want %d), b %d (want 7)", i, ga[i], wa, gb[i])
		}
	}
}

// TestCaptureUnjoined: a stream that joined but was not joined back makes
// EndCapture fail with ErrCapturing, and leaves every stream usable.
func TestCaptureUnjoined(t *testing.T) {
	d := openTestDevice(t)
	origin, a := newStream(t, d), newStream(t, d)
	buf := alloc(t, d, 64)
	fork := newEvent(t, d, false)
	if err := d.BeginCapture(origin); err != nil {
		t.Fatal(err)
	}
	fork.Record(origin)
	a.WaitEvent(fork)
	buf.Fill(a, 1, 1, 64)
	if _, err := d.EndCapture(origin); !errors.Is(err, backend.ErrCapturing) {
		t.Fatalf("EndCapture with an unjoined stream: %v", err)
	}
	if err := a.Synchronize(); err != nil {
		t.Fatalf("the stream after the failed capture: %v", err)
	}
}

// TestCaptureRecordAfterWait: an event recorded after a wait stands for
// the waited-for point too, as on CUDA. S records es after waiting for
// A's ea; the origin's wait for es alone joins A back, and orders the
// origin's copy after A's fill.
func TestCaptureRecordAfterWait(t *testing.T) {
	d := openTestDevice(t)
	o, a, s := newStream(t, d), newStream(t, d), newStream(t, d)
	const n = 1 << 12
	src, tmp, dst := alloc(t, d, n), alloc(t, d, n), alloc(t, d, n)
	e0, ea, es := newEvent(t, d, false), newEvent(t, d, false), newEvent(t, d, false)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(d.BeginCapture(o))
	must(src.Fill(o, 1, 1, n))
	must(e0.Record(o))
	must(a.WaitEvent(e0))
	must(s.WaitEvent(e0))
	must(src.Fill(a, 2, 1, n))
	must(ea.Record(a))
	must(tmp.Fill(s, 3, 1, n))
	must(s.WaitEvent(ea))
	must(es.Record(s))
	must(o.WaitEvent(es))
	must(dst.CopyFrom(o, src, n))
	g, err := d.EndCapture(o)
	must(err)
	defer g.Close()
	// After the capture its events are points of a graph.
	if err := a.WaitEvent(ea); !errors.Is(err, backend.ErrCapturing) {
		t.Fatalf("a wait for an event of an ended capture: %v", err)
	}
	x, err := g.Instantiate()
	must(err)
	must(x.Launch(o))
	must(o.Synchronize())
	must(x.Close())
	got := read(t, o, dst, n)
	for i, v := range got {
		if v != 2 {
			t.Fatalf("byte %d of the copy is %d, want 2: the copy ran before A's fill", i, v)
		}
	}
}
