package vulkan

import (
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/trace"
)

// TestTraceTimer: spans of marks around fills, on a stream and in a
// captured graph replayed with and without a trace, come out in order,
// within the host's time of the work, one per traced replay.
func TestTraceTimer(t *testing.T) {
	d := openTestDevice(t)
	rec := trace.NewRecorder("test", 0)
	bt, err := d.NewTraceTimer(rec)
	if err != nil {
		t.Fatal(err)
	}
	tt := bt.(*traceTimer)
	s := newStream(t, d)
	b := alloc(t, d, 8<<20)
	mark := func(name string) {
		t.Helper()
		m, err := tt.Begin(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Fill(s, 7, 4, b.Bytes()/4); err != nil {
			t.Fatal(err)
		}
		if err := tt.End(s, m, trace.Span{Kernel: name}); err != nil {
			t.Fatal(err)
		}
	}
	before := rec.Now()
	mark("first")
	mark("second")
	// A capture of one marked fill, replayed traced twice and plain once.
	if err := d.BeginCapture(s); err != nil {
		t.Fatal(err)
	}
	mark("captured")
	g, err := d.EndCapture(s)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	x, err := g.Instantiate()
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	te := x.(backend.TracedExec)
	if te.TracedSpans() != 1 {
		t.Fatalf("TracedSpans = %d, want 1", te.TracedSpans())
	}
	for _, name := range []string{"replay 1", "replay 2"} {
		if err := te.LaunchTraced(s, tt, []trace.Span{{Kernel: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Launch(s); err != nil {
		t.Fatal(err)
	}
	if err := tt.Flush(); err != nil {
		t.Fatal(err)
	}
	syncStream(t, s)
	after := rec.Now()
	if err := tt.Close(); err != nil {
		t.Fatal(err)
	}
	spans := rec.Spans()
	names := map[string]trace.Span{}
	for _, sp := range spans {
		names[sp.Kernel] = sp
		// The epoch's host time is taken once its timestamp is seen, up to
		// a wake-up late (milliseconds on a loaded machine): slack.
		const slack = 50 * time.Millisecond
		if sp.End < sp.Start || sp.Start < before-slack || sp.End > after+slack {
			t.Errorf("span %s: [%v, %v], outside the host's [%v, %v]", sp.Kernel, sp.Start, sp.End, before, after)
		}
	}
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (two marks, two traced replays): %+v", len(spans), spans)
	}
	order := []string{"first", "second", "replay 1", "replay 2"}
	for i := 1; i < len(order); i++ {
		a, b := names[order[i-1]], names[order[i]]
		if b.Start < a.End {
			t.Errorf("%s starts at %v, before %s ends at %v", order[i], b.Start, order[i-1], a.End)
		}
	}
}
