package trace

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Span is one task the runtime ran on a stream, or, with Instant set, one
// point event on a stream. Its fields are fixed (no map) so that recording
// one copies a small struct and allocates nothing.
type Span struct {
	// Stream names the stream's lane ("default", "stream 3"). It may be
	// empty: the lane then takes the name given to NameStream, or
	// "stream N". The runtime should pass a string it keeps per stream, so
	// that no name is formatted per launch.
	Stream string
	// StreamID identifies the stream; it is the lane's Chrome thread id.
	StreamID uint64
	// Kernel is the kernel's name (or "copy", "fill", ...); it is the
	// event's name and chooses the span's colour in the SVG.
	Kernel string
	// Kind is what sort of task this is: "serial", "parallel", "copy", ...
	// It becomes the event's category, so Perfetto can filter by it.
	Kind string
	// Launch numbers the launch this task belongs to (0: unknown), so the
	// tasks that a stream-parallel launch spread over several streams can
	// be told apart from those of other launches.
	Launch uint64
	// Task is the task's index in its kernel's plan; Group its
	// stream-parallel group (0: the launch stream).
	Task, Group int
	// Start and End are times since the Recorder's epoch. End is ignored
	// for instants.
	Start, End time.Duration
	// Instant marks a point event (an event record, a wait) rather than a
	// task.
	Instant bool
}

// DefaultMaxSpans is how many spans a Recorder keeps when NewRecorder is
// given no limit: about 100 MiB of spans.
const DefaultMaxSpans = 1 << 20

// chunkSize is the number of spans per slab: large enough that the
// slab's allocation is negligible per span, small enough that a short trace
// does not hold megabytes.
const chunkSize = 1024

// slot holds one span; ready is set once the span is written, so a reader
// that runs while spans are being recorded takes only whole spans.
type slot struct {
	span  Span
	ready atomic.Bool
}

// chunk is a slab of slots filled in the order that next hands them out.
type chunk struct {
	next  atomic.Int64
	slots [chunkSize]slot
}

// nShards is the number of slabs filled at once. Spans go to the shard of
// their stream, so goroutines launching on different streams do not
// contend for one counter's cache line: with one shared counter, 16
// goroutines recorded no faster together than one alone.
const nShards = 16

// shard holds the slab its streams fill now, alone on its cache line.
type shard struct {
	cur atomic.Pointer[chunk]
	_   [56]byte
}

// A Recorder collects spans from many goroutines at once. Recording takes
// no lock: a goroutine reserves a slot of its stream's shard's current slab
// with one atomic add and fills it; only the goroutine that finds the slab
// full (or missing) takes the mutex, to add the next slab. Once MaxSpans are held, later spans are
// dropped and counted (see Dropped), so a forgotten trace cannot eat the
// machine's memory.
//
// The zero Recorder is not usable; call NewRecorder. A nil *Recorder is:
// its Span does nothing.
type Recorder struct {
	epoch     time.Time
	process   string
	maxChunks int

	shards  [nShards]shard
	full    atomic.Bool
	dropped atomic.Int64

	mu     sync.Mutex // guards the fields below, and growing
	chunks []*chunk   // every slab, in the order they were added
	names  map[uint64]string
	meta   map[string]string
}

// NewRecorder returns a Recorder whose epoch is now. process names the
// trace's process track (the device, e.g. "CUDA: NVIDIA H200"); maxSpans
// bounds the spans kept (≤ 0: DefaultMaxSpans).
func NewRecorder(process string, maxSpans int) *Recorder {
	if maxSpans <= 0 {
		maxSpans = DefaultMaxSpans
	}
	// Slabs are added on first use, so a short trace holds one slab per
	// stream shard it used, not nShards.
	return &Recorder{
		epoch:     time.Now(),
		process:   process,
		maxChunks: (maxSpans + chunkSize - 1) / chunkSize,
	}
}

// Epoch is the instant that Span times count from. Its monotonic clock
// reading is kept, so time.Since(r.Epoch()) is immune to wall-clock steps.
func (r *Recorder) Epoch() time.Time { return r.epoch }

// Now is the time since the epoch, by the host's monotonic clock: what the
// CPU backend passes as Start and End.
func (r *Recorder) Now() time.Duration { return time.Since(r.epoch) }

// Span records s. It is safe to call from any number of goroutines, never
// blocks on other recorders except when a slab fills, and does nothing on
// a nil Recorder.
func (r *Recorder) Span(s Span) {
	// Small enough to inline, so a nil Recorder costs a compare.
	if r != nil {
		r.record(&s)
	}
}

// record is Span's body: reserve a slot of the shard's current slab, fill
// it, publish it.
func (r *Recorder) record(s *Span) {
	sh := &r.shards[s.StreamID%nShards]
	for {
		c := sh.cur.Load()
		if c != nil {
			if i := c.next.Add(1) - 1; i < chunkSize {
				sl := &c.slots[i]
				sl.span = *s
				sl.ready.Store(true)
				return
			}
		}
		if !r.grow(sh, c) {
			r.dropped.Add(1)
			return
		}
	}
}

// grow installs a fresh slab in sh in place of old (full, or nil), unless
// another goroutine already did. It reports false when the recorder holds
// its limit of spans.
func (r *Recorder) grow(sh *shard, old *chunk) bool {
	if r.full.Load() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if sh.cur.Load() != old {
		return true
	}
	if len(r.chunks) >= r.maxChunks {
		r.full.Store(true)
		return false
	}
	c := new(chunk)
	r.chunks = append(r.chunks, c)
	sh.cur.Store(c)
	return true
}

// Dropped is the number of spans not kept because the recorder was full.
func (r *Recorder) Dropped() int64 { return r.dropped.Load() }

// NameStream names the lane of stream id, for spans that carry no Stream
// name. A later call for the same id replaces the name.
func (r *Recorder) NameStream(id uint64, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names == nil {
		r.names = make(map[uint64]string)
	}
	r.names[id] = name
}

// SetMeta sets a key of the trace's otherData (e.g. "arch": "cuda",
// "clock": "cuda events"), which Perfetto shows as trace metadata.
func (r *Recorder) SetMeta(key, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.meta == nil {
		r.meta = make(map[string]string)
	}
	r.meta[key] = value
}

// Reset discards every span and the drop count, keeping the epoch, the
// stream names and the metadata. Spans recorded while Reset runs may be
// lost.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunks = nil
	for i := range r.shards {
		r.shards[i].cur.Store(nil)
	}
	r.full.Store(false)
	r.dropped.Store(0)
}

// Spans returns a copy of the spans recorded so far, in no useful order
// (per shard, in recording order, which differs between runs where
// goroutines race). A span whose
// recording is still under way when Spans runs is left out.
func (r *Recorder) Spans() []Span {
	r.mu.Lock()
	chunks := slices.Clone(r.chunks)
	r.mu.Unlock()
	var out []Span
	for _, c := range chunks {
		n := min(c.next.Load(), chunkSize)
		for i := range n {
			if sl := &c.slots[i]; sl.ready.Load() {
				out = append(out, sl.span)
			}
		}
	}
	return out
}

// Trace returns the recorded spans as a Trace: one lane per stream, in
// stream id order, spans sorted by time. Its Meta holds the SetMeta keys,
// "epoch" (the wall-clock time of the epoch, RFC 3339) and, when spans were
// dropped, "dropped".
func (r *Recorder) Trace() *Trace {
	spans := r.Spans()
	r.mu.Lock()
	names := make(map[uint64]string, len(r.names))
	for id, n := range r.names {
		names[id] = n
	}
	meta := map[string]string{"epoch": r.epoch.Format(time.RFC3339Nano)}
	for k, v := range r.meta {
		meta[k] = v
	}
	r.mu.Unlock()
	if d := r.Dropped(); d > 0 {
		meta["dropped"] = strconv.FormatInt(d, 10)
	}
	t := NewTrace(r.process, spans, names)
	t.Meta = meta
	return t
}

// NewTrace groups spans into lanes by StreamID. A lane's name is
// names[id] if present, else the Stream of its earliest span that has one,
// else "stream N"; every span's Stream is set to its lane's name and every
// instant's End to its Start. Lanes
// are in stream id order and spans in time order (ties broken by every
// other field), so the result does not depend on the order of spans.
func NewTrace(process string, spans []Span, names map[uint64]string) *Trace {
	byID := make(map[uint64][]Span)
	for _, s := range spans {
		if s.Instant {
			s.End = s.Start
		}
		byID[s.StreamID] = append(byID[s.StreamID], s)
	}
	ids := make([]uint64, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	t := &Trace{Process: process, Lanes: make([]Lane, 0, len(ids))}
	for _, id := range ids {
		ss := byID[id]
		slices.SortFunc(ss, compareSpans)
		name, ok := names[id]
		if !ok {
			for _, s := range ss {
				if s.Stream != "" {
					name, ok = s.Stream, true
					break
				}
			}
		}
		if !ok {
			name = "stream " + strconv.FormatUint(id, 10)
		}
		for i := range ss {
			ss[i].Stream = name
		}
		t.Lanes = append(t.Lanes, Lane{Name: name, PID: 1, TID: int64(id), Spans: ss})
	}
	return t
}

// compareSpans orders spans by time, then by every other field, so that
// sorting is deterministic whatever order the spans came in.
func compareSpans(a, b Span) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.End, b.End); c != 0 {
		return c
	}
	if a.Instant != b.Instant {
		if a.Instant {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(a.Kernel, b.Kernel); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Launch, b.Launch); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Task, b.Task); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return cmp.Compare(a.Stream, b.Stream)
}
