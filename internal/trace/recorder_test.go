package trace

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"
)

// record fills r from several goroutines, as launches on several streams
// would: each goroutine is a stream with its own kernels, plus instants.
func record(r *Recorder, streams, perStream int) {
	var wg sync.WaitGroup
	for s := range streams {
		wg.Go(func() {
			name := fmt.Sprintf("stream %d", s)
			if s == 0 {
				name = "default"
			}
			for i := range perStream {
				start := time.Duration(s*1000+i*10) * time.Microsecond
				r.Span(Span{
					Stream: name, StreamID: uint64(s), Kernel: fmt.Sprintf("k%d", i%3),
					Kind: "parallel", Launch: uint64(i + 1), Task: i % 4, Group: s % 2,
					Start: start, End: start + time.Duration(i*1001+7),
				})
				if i%5 == 0 {
					r.Span(Span{StreamID: uint64(s), Kernel: "event record", Kind: "event", Start: start + 3, End: 999, Instant: true})
				}
			}
		})
	}
	wg.Wait()
}

func TestRecorderConcurrent(t *testing.T) {
	r := NewRecorder("CPU", 0)
	record(r, 8, 3000)
	spans := r.Spans()
	if want := 8 * (3000 + 600); len(spans) != want {
		t.Fatalf("got %d spans, want %d", len(spans), want)
	}
	seen := map[[2]uint64]bool{}
	for _, s := range spans {
		if s.Instant {
			continue
		}
		k := [2]uint64{s.StreamID, s.Launch}
		if seen[k] {
			t.Fatalf("span %v recorded twice", k)
		}
		seen[k] = true
	}
	if r.Dropped() != 0 {
		t.Fatalf("dropped %d", r.Dropped())
	}
}

func TestRecorderLimitAndReset(t *testing.T) {
	r := NewRecorder("CPU", 1500) // rounds up to two slabs
	record(r, 4, 1000)            // 4 × 1200 spans
	// Which streams' spans fill the two slabs depends on the scheduler;
	// how many are kept, at most two slabs' worth, and that every other
	// span is counted, does not.
	kept := len(r.Spans())
	if kept < chunkSize || kept > 2*chunkSize {
		t.Fatalf("kept %d spans, want %d to %d", kept, chunkSize, 2*chunkSize)
	}
	if got, want := r.Dropped(), int64(4*1200-kept); got != want {
		t.Fatalf("dropped %d, want %d", got, want)
	}
	if got := r.Trace().Meta["dropped"]; got != fmt.Sprint(4*1200-kept) {
		t.Fatalf("Meta[dropped] = %q", got)
	}
	r.Reset()
	if len(r.Spans()) != 0 || r.Dropped() != 0 {
		t.Fatal("Reset kept spans")
	}
	r.Span(Span{Kernel: "k"})
	if len(r.Spans()) != 1 {
		t.Fatal("recording after Reset failed")
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	r.Span(Span{Kernel: "k"}) // must not panic
}

// TestSpansWhileRecording reads while goroutines record: under -race this
// checks that a reader only sees whole spans.
func TestSpansWhileRecording(t *testing.T) {
	r := NewRecorder("CPU", 0)
	done := make(chan struct{})
	go func() {
		record(r, 4, 2000)
		close(done)
	}()
	for {
		for _, s := range r.Spans() {
			if s.Kind != "parallel" && s.Kind != "event" {
				t.Fatalf("torn span %+v", s)
			}
		}
		select {
		case <-done:
			return
		default:
		}
	}
}

func TestNewTraceNamesAndOrder(t *testing.T) {
	spans := []Span{
		{StreamID: 7, Kernel: "b", Start: 20, End: 30},
		{StreamID: 2, Stream: "s2", Kernel: "a", Start: 5, End: 9},
		{StreamID: 7, Kernel: "a", Start: 10, End: 15},
		{StreamID: 9, Kernel: "c", Start: 1, End: 2},
		{StreamID: 2, Kernel: "i", Start: 3, End: 100, Instant: true},
	}
	tr := NewTrace("dev", spans, map[uint64]string{9: "nine"})
	var names []string
	for _, l := range tr.Lanes {
		names = append(names, l.Name)
	}
	if want := []string{"s2", "stream 7", "nine"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("lanes %q, want %q", names, want)
	}
	if l := tr.Lanes[0]; l.Spans[0].Kernel != "i" || l.Spans[0].End != 3 || l.Spans[1].Stream != "s2" {
		t.Fatalf("lane 0 spans %+v", l.Spans)
	}
	if l := tr.Lanes[1]; l.Spans[0].Kernel != "a" || l.Spans[1].Kernel != "b" {
		t.Fatalf("lane 1 not in time order: %+v", l.Spans)
	}
	// Deterministic: the order of the input does not matter.
	rev := make([]Span, len(spans))
	for i, s := range spans {
		rev[len(spans)-1-i] = s
	}
	var a, b bytes.Buffer
	if err := WriteChrome(&a, tr); err != nil {
		t.Fatal(err)
	}
	if err := WriteChrome(&b, NewTrace("dev", rev, map[uint64]string{9: "nine"})); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Fatalf("output depends on span order:\n%s\n%s", a.String(), b.String())
	}
}

// benchSpans records b.N spans from procs goroutines, each on its own
// stream unless oneStream, into fresh recorders of 1M spans, so that memory
// stays bounded however large b.N. ns/op is wall time per span of all
// goroutines together: the recorder's throughput.
func benchSpans(b *testing.B, procs int, oneStream bool) {
	b.ReportAllocs()
	const batch = 1 << 20
	s := Span{Stream: "stream 1", StreamID: 1, Kernel: "saxpy", Kind: "parallel", Task: 1, Start: 10, End: 20}
	b.ResetTimer()
	for done := 0; done < b.N; done += batch {
		n := min(batch, b.N-done)
		r := NewRecorder("bench", batch)
		var wg sync.WaitGroup
		for p := range procs {
			share := n / procs
			if p < n%procs {
				share++
			}
			wg.Go(func() {
				sp := s
				if !oneStream {
					sp.StreamID = uint64(p)
				}
				for range share {
					r.Span(sp)
				}
			})
		}
		wg.Wait()
	}
}

// BenchmarkSpan is GOMAXPROCS goroutines recording at once, each on its
// own stream, into one recorder.
func BenchmarkSpan(b *testing.B) { benchSpans(b, runtime.GOMAXPROCS(0), false) }

// BenchmarkSpanOneStream is GOMAXPROCS goroutines recording at once on the
// same stream: the worst contention a runtime can make.
func BenchmarkSpanOneStream(b *testing.B) { benchSpans(b, runtime.GOMAXPROCS(0), true) }

// BenchmarkSpanSerial is one goroutine recording.
func BenchmarkSpanSerial(b *testing.B) { benchSpans(b, 1, false) }

// BenchmarkSpanNil is the cost of a Span call on a nil Recorder: tracing
// off, for a runtime that calls without testing first.
func BenchmarkSpanNil(b *testing.B) {
	var r *Recorder
	s := Span{Kernel: "saxpy"}
	b.ReportAllocs()
	for b.Loop() {
		r.Span(s)
	}
}

// BenchmarkTimedSpan is what a CPU-backend launch pays with tracing on:
// two clock reads and a span.
func BenchmarkTimedSpan(b *testing.B) {
	r := NewRecorder("bench", 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%(1<<20) == 0 {
			r.Reset()
		}
		start := r.Now()
		r.Span(Span{Stream: "default", Kernel: "saxpy", Kind: "parallel", Start: start, End: r.Now()})
	}
}
