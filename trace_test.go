package qd

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/suitekernels"
	"github.com/quadrants-go/qd/internal/trace"
)

func TestTrace(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		needs(t, p, needTrace)
		saxpy := build(t, p, suitekernels.SaxpyN())
		groups := build(t, p, suitekernels.Groups(3))
		add := build(t, p, suitekernels.Add())
		// One output per stream: the streams run at once.
		x := newNdarray[float32](t, p, 256)
		y := newNdarray[float32](t, p, 256)
		y1 := newNdarray[float32](t, p, 256)
		y2 := newNdarray[float32](t, p, 256)
		g := newNdarray[float32](t, p, 3)
		s1 := newStream(t, p)
		s2 := newStream(t, p)

		// Not traced: before StartTrace.
		check(t, saxpy.Launch(float32(1), x, y, int64(256)))
		if p.Tracing() {
			t.Fatal("Tracing() before StartTrace")
		}
		check(t, p.StartTrace())
		if !p.Tracing() {
			t.Fatal("Tracing() after StartTrace")
		}
		check(t, saxpy.Launch(float32(2), x, y, int64(256)))
		check(t, saxpy.LaunchOn(s1, float32(2), x, y1, int64(256)))
		check(t, saxpy.LaunchOn(s2, float32(2), x, y2, int64(256)))
		check(t, groups.Launch(g))
		a, b, c := []float32{1, 2}, []float32{3, 4}, make([]float32, 2)
		check(t, add.LaunchOn(s1, a, b, c))
		if c[0] != 4 || c[1] != 6 {
			t.Fatalf("add with tracing on: got %v", c)
		}
		var buf bytes.Buffer
		check(t, p.StopTrace(&buf))
		if p.Tracing() {
			t.Fatal("Tracing() after StopTrace")
		}
		if err := p.StopTrace(nil); err == nil {
			t.Fatal("a second StopTrace did not fail")
		}
		// Not traced: after StopTrace.
		check(t, saxpy.Launch(float32(1), x, y, int64(256)))
		check(t, p.Synchronize())

		if err := trace.Validate(buf.Bytes()); err != nil {
			t.Fatalf("invalid Chrome trace: %v\n%s", err, buf.String())
		}
		tr, err := trace.ReadChrome(bytes.NewReader(buf.Bytes()))
		check(t, err)
		lanes := map[string][]trace.Span{}
		var names []string
		for _, l := range tr.Lanes {
			lanes[l.Name] = l.Spans
			names = append(names, l.Name)
		}
		for _, want := range []string{"default", "stream 1", "stream 2", "pool 1", "pool 2"} {
			if _, ok := lanes[want]; !ok {
				t.Errorf("no lane %q; lanes %q", want, names)
			}
		}
		if len(tr.Lanes) != 5 {
			t.Errorf("%d lanes %q, want 5 (one per stream used)", len(tr.Lanes), names)
		}
		count := func(lane, kernel string) (n int) {
			for _, s := range lanes[lane] {
				if s.Kernel == kernel {
					n++
				}
			}
			return n
		}
		if n := count("default", "saxpy"); n != 1 {
			t.Errorf("default lane has %d saxpy spans, want 1 (the launch before StartTrace and after StopTrace are not traced)", n)
		}
		for _, l := range []string{"stream 1", "stream 2"} {
			if n := count(l, "saxpy"); n != 1 {
				t.Errorf("lane %s has %d saxpy spans, want 1", l, n)
			}
		}
		if n := count("stream 1", "add"); n != 1 {
			t.Errorf("lane stream 1 has %d add spans, want 1", n)
		}
		// The three groups of one launch: one span each, on three lanes,
		// with their group ids and the same launch number.
		groupLane := map[int]string{}
		launch := uint64(0)
		for name, spans := range lanes {
			for _, s := range spans {
				if s.Kernel != "groups3" {
					continue
				}
				if prev, ok := groupLane[s.Group]; ok {
					t.Errorf("group %d on lanes %s and %s", s.Group, prev, name)
				}
				groupLane[s.Group] = name
				if launch != 0 && s.Launch != launch {
					t.Errorf("groups of one launch have launch numbers %d and %d", launch, s.Launch)
				}
				launch = s.Launch
			}
		}
		if len(groupLane) != 3 || groupLane[1] != "default" || groupLane[2] == groupLane[3] {
			t.Errorf("group lanes %v; want 3 groups, group 1 on default, the others on two pool lanes", groupLane)
		}
		for name, spans := range lanes {
			for _, s := range spans {
				if s.End < s.Start || s.Start < 0 {
					t.Errorf("lane %s: span %s [%v, %v]", name, s.Kernel, s.Start, s.End)
				}
				if s.Kind == "" {
					t.Errorf("lane %s: span %s has no kind", name, s.Kernel)
				}
			}
		}
		// Spans of one stream do not overlap: the stream runs in order.
		for name, spans := range lanes {
			for i := 1; i < len(spans); i++ {
				if spans[i].Start < spans[i-1].End {
					t.Errorf("lane %s: %s starts at %v before %s ends at %v", name, spans[i].Kernel, spans[i].Start, spans[i-1].Kernel, spans[i-1].End)
				}
			}
		}
		if p.Arch() != CPU {
			// Slices are copied on a GPU: the copies are spans too.
			if n := count("stream 1", "copy in add.a"); n != 1 {
				t.Errorf("no copy-in span for add.a on stream 1: %v", lanes["stream 1"])
			}
			if n := count("stream 1", "copy out add.c"); n != 1 {
				t.Errorf("no copy-out span for add.c on stream 1: %v", lanes["stream 1"])
			}
		}
	})
}

func TestWithTrace(t *testing.T) {
	p := initProgram(t, WithArch(CPU), WithTrace())
	defer p.Close()
	if !p.Tracing() {
		t.Fatal("WithTrace: not tracing after Init")
	}
	k := build(t, p, suitekernels.SaxpyN())
	x := newNdarray[float32](t, p, 8)
	for range 3 {
		check(t, k.Launch(float32(1), x, x, int64(8)))
	}
	var buf bytes.Buffer
	check(t, p.StopTrace(&buf))
	tr, err := trace.ReadChrome(&buf)
	check(t, err)
	if len(tr.Lanes) != 1 || len(tr.Lanes[0].Spans) != 3 {
		t.Fatalf("want one lane of 3 spans, got %+v", tr.Lanes)
	}
	for i, s := range tr.Lanes[0].Spans {
		if s.Launch != uint64(i+1) || s.Kind != "parallel" || s.Kernel != "saxpy" {
			t.Errorf("span %d: %+v", i, s)
		}
	}
	if !strings.Contains(tr.Meta["clock"], "monotonic") {
		t.Errorf("meta %v has no clock", tr.Meta)
	}
}

// TestTraceConcurrent starts, restarts and stops traces while goroutines
// launch, for the race detector; a trace written after the restart holds
// only whole spans.
func TestTraceConcurrent(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	k := build(t, p, suitekernels.SaxpyN())
	x := newNdarray[float32](t, p, 64)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		s := newStream(t, p)
		y := newNdarray[float32](t, p, 64)
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := k.LaunchOn(s, float32(1), x, y, int64(64)); err != nil {
					t.Error(err)
					return
				}
				if i%16 == 15 {
					// Keep the queue short, so StopTrace's wait is too.
					if err := s.Synchronize(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	for range 5 {
		check(t, p.StartTrace())
		time.Sleep(time.Millisecond)
	}
	var buf bytes.Buffer
	check(t, p.StopTrace(&buf))
	close(stop)
	wg.Wait()
	check(t, p.Synchronize())
	if err := trace.Validate(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	// Close with a trace on drops it.
	check(t, p.StartTrace())
	check(t, k.Launch(float32(1), x, x, int64(64)))
}

// BenchmarkLaunchTrace is BenchmarkLaunchCPU with tracing off and on: off
// must be within noise of BenchmarkLaunchCPU (one atomic load per launch).
func BenchmarkLaunchTrace(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run(name, func(b *testing.B) {
			p := initProgram(b, WithArch(CPU))
			defer p.Close()
			k := build(b, p, suitekernels.SaxpyN())
			x := newNdarray[float32](b, p, 16)
			y := newNdarray[float32](b, p, 16)
			s := newStream(b, p)
			if on {
				check(b, p.StartTrace())
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := k.LaunchOn(s, float32(2), x, y, int64(16)); err != nil {
					b.Fatal(err)
				}
				if i%1024 == 1023 {
					check(b, s.Synchronize())
					if on && i%(1<<18) == (1<<18)-1 {
						// Keep the recorder under its span limit.
						check(b, p.StopTrace(nil))
						check(b, p.StartTrace())
					}
				}
			}
			check(b, s.Synchronize())
			if on {
				check(b, p.StopTrace(nil))
			}
		})
	}
}
