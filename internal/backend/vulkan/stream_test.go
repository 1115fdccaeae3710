package vulkan

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
)

// TestStreamOrder enqueues many fills of one buffer, each followed by a
// copy of it into a buffer of its own: each copy must see its fill and
// not a later one, so the stream's submits run in order.
func TestStreamOrder(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	const n, k = 1 << 16, 64
	a := alloc(t, d, n)
	outs := make([]*Buffer, k)
	for i := range outs {
		outs[i] = alloc(t, d, n)
		if err := a.Fill(s, uint32(i+1), 4, n/4); err != nil {
			t.Fatal(err)
		}
		if err := outs[i].CopyFrom(s, a, n); err != nil {
			t.Fatal(err)
		}
	}
	syncStream(t, s)
	for i, b := range outs {
		got := read(t, s, b, n)
		want := bytes.Repeat([]byte{byte(i + 1), 0, 0, 0}, n/4)
		if j := firstDiff(got, want); j >= 0 {
			t.Fatalf("copy %d: byte %d is %#x, want %#x", i, j, got[j], want[j])
		}
	}
	if s.last < 2*k {
		t.Errorf("%d submits for %d operations", s.last, 2*k)
	}
	if len(s.main.free)+len(s.main.inflight) > 2*k {
		t.Errorf("%d command buffers for %d operations", len(s.main.free)+len(s.main.inflight), 2*k)
	}
}

// TestCommandBufferReuse checks that a steady stream of operations, each
// waited for, reuses one command buffer.
func TestCommandBufferReuse(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	b := alloc(t, d, 256)
	for range 20 {
		if err := b.Zero(s); err != nil {
			t.Fatal(err)
		}
		syncStream(t, s)
	}
	if n := len(s.main.free) + len(s.main.inflight); n != 1 {
		t.Errorf("%d command buffers for 20 operations one at a time, want 1", n)
	}
}

func TestQuerySynchronize(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	if done, err := s.Query(); err != nil || !done {
		t.Fatalf("Query of a new stream: %v, %v", done, err)
	}
	syncStream(t, s)
	// A stream held by a host-signalled event: Query sees the work
	// pending until the host signals.
	e, signal := hostEvent(t, d)
	if err := s.WaitEvent(e); err != nil {
		t.Fatal(err)
	}
	b := alloc(t, d, 1024)
	if err := b.Zero(s); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if done, err := s.Query(); err != nil || done {
			t.Fatalf("Query of a stream waiting for the host: %v, %v", done, err)
		}
		time.Sleep(time.Millisecond)
	}
	signal()
	syncStream(t, s)
	if done, err := s.Query(); err != nil || !done {
		t.Fatalf("Query after Synchronize: %v, %v", done, err)
	}
}

// TestHooks checks onComplete: hooks run in value order once reached, by
// Synchronize or Query, and the first error is reported once.
func TestHooks(t *testing.T) {
	d := openTestDevice(t)
	s := newStream(t, d)
	b := alloc(t, d, 64)
	var mu sync.Mutex
	var ran []int
	hookN := func(i int, err error) func() error {
		return func() error {
			mu.Lock()
			ran = append(ran, i)
			mu.Unlock()
			return err
		}
	}
	e, signal := hostEvent(t, d)
	if err := s.WaitEvent(e); err != nil {
		t.Fatal(err)
	}
	v, err := s.submit(func(cb uintptr) { d.vd.CmdFill(cb, b.a.mem.Buffer, 0, 64, 7) })
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	s.onComplete(v, hookN(2, boom))
	s.onComplete(v-1, hookN(1, nil))
	s.onComplete(v, hookN(3, errors.New("second")))
	if done, _ := s.Query(); done {
		t.Fatal("done before the host signalled")
	}
	mu.Lock()
	if len(ran) != 1 || ran[0] != 1 {
		t.Errorf("before the value: ran %v, want [1] (the earlier value's)", ran)
	}
	mu.Unlock()
	signal()
	if err := s.Synchronize(); !errors.Is(err, boom) {
		t.Errorf("Synchronize: %v, want the first hook's error", err)
	}
	if err := s.Synchronize(); err != nil {
		t.Errorf("second Synchronize: %v, want nil", err)
	}
	if fmt.Sprint(ran) != "[1 2 3]" {
		t.Errorf("hooks ran %v, want [1 2 3]", ran)
	}
	// A hook of a reached value runs at the next Query.
	s.onComplete(v, hookN(4, nil))
	if done, err := s.Query(); !done || err != nil {
		t.Fatal(done, err)
	}
	if fmt.Sprint(ran) != "[1 2 3 4]" {
		t.Errorf("hooks ran %v, want [1 2 3 4]", ran)
	}
	// Close runs what is left and reports its error.
	s2 := newStream(t, d)
	s2.onComplete(1<<40, hookN(5, boom))
	if err := s2.Close(); !errors.Is(err, boom) {
		t.Errorf("Close: %v, want the hook's error", err)
	}
	s2.onComplete(1, hookN(6, nil)) // a released stream runs it at once
	if fmt.Sprint(ran) != "[1 2 3 4 5 6]" {
		t.Errorf("hooks ran %v, want [1 2 3 4 5 6]", ran)
	}
}

// TestManyStreams makes more streams than queues (lavapipe has one):
// they share queues round robin, and each keeps its order.
func TestManyStreams(t *testing.T) {
	d := openTestDevice(t)
	nq := len(d.queues)
	streams := make([]*Stream, 2*nq+3)
	for i := range streams {
		streams[i] = newStream(t, d)
	}
	for i, s := range streams {
		if want := streams[i%nq].main.q; s.main.q != want {
			t.Errorf("stream %d is on another queue than stream %d", i, i%nq)
		}
	}
	const n = 4096
	bufs := make([]*Buffer, len(streams))
	for i, s := range streams {
		bufs[i] = alloc(t, d, n)
		for j := range 10 {
			if err := bufs[i].Fill(s, uint32(i*16+j), 1, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, s := range streams {
		got := read(t, s, bufs[i], n)
		if want := bytes.Repeat([]byte{byte(i*16 + 9)}, n); !bytes.Equal(got, want) {
			t.Errorf("stream %d: got %#x..., want %#x", i, got[0], want[0])
		}
	}
}

// TestStreamReusesTimeline checks that a stream made after another closed
// takes over its semaphore, and that an event recorded on the closed
// stream stays reached.
func TestStreamReusesTimeline(t *testing.T) {
	d := openTestDevice(t)
	bs, err := d.NewStream(0)
	if err != nil {
		t.Fatal(err)
	}
	s := bs.(*Stream)
	b := alloc(t, d, 64)
	e := newEvent(t, d, false)
	for range 3 {
		if err := b.Zero(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Record(s); err != nil {
		t.Fatal(err)
	}
	sem := s.sem
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := newStream(t, d)
	if s2.sem != sem || s2.last < 3 {
		t.Errorf("new stream: semaphore %#x at %d, want %#x at 3 or more", s2.sem, s2.last, sem)
	}
	if done, err := e.Query(); err != nil || !done {
		t.Errorf("event of the closed stream: %v, %v", done, err)
	}
	if err := s2.WaitEvent(e); err != nil || len(s2.waits) != 0 {
		t.Errorf("WaitEvent of a reached event: %v, %d waits", err, len(s2.waits))
	}
	if err := b.Zero(s2); err != nil {
		t.Fatal(err)
	}
	syncStream(t, s2)
}

// TestConcurrentStreams runs goroutines on streams of their own, and
// goroutines sharing one stream, at once (run it with -race too).
func TestConcurrentStreams(t *testing.T) {
	d := openTestDevice(t)
	const workers, rounds, n = 4, 25, 3000
	shared := newStream(t, d)
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	for w := range 2 * workers {
		s := shared
		if w < workers {
			s = newStream(t, d)
		}
		a, b := alloc(t, d, n), alloc(t, d, n)
		h := allocHost(t, d, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- worker(s, a, b, h, w, rounds)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// worker copies patterns host → a → b → host, through staging and
// through h, checking each round.
func worker(s *Stream, a, b *Buffer, h *HostBuffer, w, rounds int) error {
	n := a.Bytes()
	hb := h.mem.Mapped
	hbytes := hostBytes(hb, n)
	e, err := s.d.NewEvent(false)
	if err != nil {
		return err
	}
	defer e.Close()
	for r := range rounds {
		orig := pattern(n, byte(w*rounds+r))
		want := bytes.Clone(orig)
		if err := a.CopyFromHost(s, ptr(orig), n); err != nil {
			return err
		}
		if err := b.CopyFrom(s, a, n); err != nil {
			return err
		}
		if err := b.Fill(s, uint32(r), 1, 1); err != nil {
			return err
		}
		want[0] = byte(r)
		if err := b.CopyToHost(s, hb, n); err != nil {
			return err
		}
		if err := e.Record(s); err != nil {
			return err
		}
		if err := e.Synchronize(); err != nil {
			return err
		}
		if j := firstDiff(hbytes, want); j >= 0 {
			return fmt.Errorf("worker %d round %d: host buffer byte %d is %#x, want %#x", w, r, j, hbytes[j], want[j])
		}
		got := make([]byte, n)
		if err := a.CopyToHost(s, ptr(got), n); err != nil {
			return err
		}
		if j := firstDiff(got, orig); j >= 0 {
			return fmt.Errorf("worker %d round %d: staged byte %d is %#x, want %#x", w, r, j, got[j], orig[j])
		}
	}
	return s.Synchronize()
}

// TestClosedObjects checks that closed streams, events and buffers refuse
// use with errors matching ErrClosed, and that Close is idempotent.
func TestClosedObjects(t *testing.T) {
	d := openTestDevice(t)
	live := newStream(t, d)
	s := newStream(t, d)
	e := newEvent(t, d, false)
	b := alloc(t, d, 64)
	other := alloc(t, d, 64)
	v := view(t, b, 4, 8)
	h := allocHost(t, d, 64)
	if err := e.Record(live); err != nil {
		t.Fatal(err)
	}
	for _, c := range []interface{ Close() error }{s, s, e, e, v, v, h, h} {
		if err := c.Close(); err != nil {
			t.Errorf("%T.Close: %v", c, err)
		}
	}
	buf := make([]byte, 8)
	cases := []struct {
		what string
		err  error
	}{
		{"Stream.Synchronize", s.Synchronize()},
		{"Stream.Query", second(s.Query())},
		{"Stream.WaitEvent", s.WaitEvent(e)},
		{"WaitEvent of a closed event", live.WaitEvent(e)},
		{"Stream.submit", second(s.submit(nil))},
		{"Event.Record", e.Record(live)},
		{"Event.Synchronize", e.Synchronize()},
		{"Event.Query", second(e.Query())},
		{"Record on a closed stream", newEvent(t, d, false).Record(s)},
		{"NewEvent(true).Record on a closed stream", newEvent(t, d, true).Record(s)},
		{"copy on a closed stream", b.CopyFromHost(s, ptr(buf), 8)},
		{"AllocOn a closed stream", second(d.AllocOn(s, 8))},
		{"FreeOn a closed stream", other.FreeOn(s)},
		{"a closed view's CopyToHost", v.CopyToHost(live, ptr(buf), 8)},
		{"a closed view's View", second(v.View(0, 1))},
		{"CopyFrom a closed view", b.CopyFrom(live, v, 8)},
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, []struct {
		what string
		err  error
	}{
		{"a closed buffer's Zero", b.Zero(live)},
		{"a closed buffer's Fill", b.Fill(live, 1, 1, 1)},
		{"a closed buffer's CopyFrom", b.CopyFrom(live, other, 8)},
		{"a view of a closed buffer", view(t, other, 0, 8).CopyFrom(live, b, 8)},
		{"a closed buffer's FreeOn", b.FreeOn(live)},
	}...)
	for _, c := range cases {
		if !errors.Is(c.err, backend.ErrClosed) {
			t.Errorf("%s: %v, want an error matching ErrClosed", c.what, c.err)
		}
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Buffer.Close: %v", err)
	}
}
