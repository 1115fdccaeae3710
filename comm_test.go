package qd

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/comm"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// commAddr is a loopback address whose port was free a moment ago.
func commAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// inGroup runs f as every member of a group of size on the CPU, each with
// its own Program and Comm, at once, and fails t with their errors.
func inGroup(t *testing.T, size int, f func(r int, p *Program, c *Comm) error, opts ...CommOption) {
	t.Helper()
	if err := runGroup(t, size, f, opts...); err != nil {
		t.Fatal(err)
	}
}

func runGroup(t *testing.T, size int, f func(r int, p *Program, c *Comm) error, opts ...CommOption) error {
	addr := commAddr(t)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Go(func() {
			p, err := Init(WithArch(CPU))
			if err != nil {
				errs[r] = err
				return
			}
			defer p.Close()
			c, err := NewComm(p, append([]CommOption{CommRank(r, size, addr), CommTimeouts(20*time.Second, 5*time.Second, 20*time.Second)}, opts...)...)
			if err != nil {
				errs[r] = err
				return
			}
			defer c.Close()
			if err := f(r, p, c); err != nil {
				errs[r] = fmt.Errorf("rank %d: %w", r, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func fromSlice[T Elem](p *Program, v []T, shape ...int) (*Ndarray[T], error) {
	if len(shape) == 0 {
		shape = []int{len(v)}
	}
	a, err := NewNdarray[T](p, shape...)
	if err != nil {
		return nil, err
	}
	return a, a.CopyFromHost(v)
}

func expect[T comparable](what string, got []T, want func(i int) T) error {
	for i, g := range got {
		if w := want(i); g != w {
			return fmt.Errorf("%s[%d] = %v, want %v", what, i, g, w)
		}
	}
	return nil
}

func TestCommCollectivesCPU(t *testing.T) {
	const size, n = 3, 37
	inGroup(t, size, func(r int, p *Program, c *Comm) error {
		if c.Rank() != r || c.Size() != size {
			return fmt.Errorf("Rank, Size = %d, %d", c.Rank(), c.Size())
		}
		s := p.DefaultStream()
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = float32(r*100 + i)
		}
		x, err := fromSlice(p, vals)
		if err != nil {
			return err
		}
		if err := c.AllReduceOn(s, x, Sum); err != nil {
			return err
		}
		got, err := x.ToSlice() // waits for the collective
		if err != nil {
			return err
		}
		if err := expect("AllReduceOn Sum", got, func(i int) float32 { return float32(300 + 3*i) }); err != nil {
			return err
		}
		// Into another array, int64, Max.
		iv := []int64{int64(r), int64(-r), 5}
		src, err := fromSlice(p, iv)
		if err != nil {
			return err
		}
		dst, _ := NewNdarray[int64](p, 3)
		if err := c.AllReduceIntoOn(s, dst, src, Max); err != nil {
			return err
		}
		gi, _ := dst.ToSlice()
		if fmt.Sprint(gi) != "[2 0 5]" {
			return fmt.Errorf("AllReduceIntoOn Max = %v", gi)
		}
		// Vectors reduce leaf by leaf.
		v, _ := fromSlice(p, []Vec3[float64]{{float64(r), 1, 2}})
		if err := c.AllReduceOn(s, v, Avg); err != nil {
			return err
		}
		gv, _ := v.ToSlice()
		if gv[0] != (Vec3[float64]{1, 1, 2}) {
			return fmt.Errorf("AllReduceOn Avg of Vec3 = %v", gv)
		}
		// Broadcast any element type; Reduce to root 2.
		type rec struct {
			A int32
			B float64
		}
		b, _ := fromSlice(p, []rec{{int32(r), float64(r)}})
		if err := c.BroadcastOn(s, b, 1); err != nil {
			return err
		}
		gb, _ := b.ToSlice()
		if gb[0] != (rec{1, 1}) {
			return fmt.Errorf("BroadcastOn from 1 = %v", gb)
		}
		red, _ := fromSlice(p, []uint8{uint8(r + 1), 2})
		if err := c.ReduceOn(s, red, Prod, 2); err != nil {
			return err
		}
		gr, _ := red.ToSlice()
		want := []uint8{uint8(r + 1), 2}
		if r == 2 {
			want = []uint8{6, 8}
		}
		if fmt.Sprint(gr) != fmt.Sprint(want) {
			return fmt.Errorf("ReduceOn Prod to 2 = %v, want %v", gr, want)
		}
		// AllGather into [size, 2]; ReduceScatter back.
		mine, _ := fromSlice(p, []int32{int32(r), int32(10 * r)})
		all, _ := NewNdarray[int32](p, size, 2)
		if err := c.AllGatherOn(s, all, mine); err != nil {
			return err
		}
		ga, _ := all.ToSlice()
		if fmt.Sprint(ga) != "[0 0 1 10 2 20]" {
			return fmt.Errorf("AllGatherOn = %v", ga)
		}
		part, _ := NewNdarray[int32](p, 2)
		if err := c.ReduceScatterOn(s, part, all, Sum); err != nil {
			return err
		}
		gp, _ := part.ToSlice()
		if w := fmt.Sprint([]int32{int32(3 * r), int32(30 * r)}); fmt.Sprint(gp) != w {
			return fmt.Errorf("ReduceScatterOn = %v, want %v", gp, w)
		}
		return p.Synchronize()
	})
}

// TestCommGroupHaloTwoStreams is a halo exchange: each rank sends its
// edges to both neighbours and receives theirs, in one Group, the sends
// on one stream and the receives on another.
func TestCommGroupHaloTwoStreams(t *testing.T) {
	const size, n = 4, 1 << 18
	inGroup(t, size, func(r int, p *Program, c *Comm) error {
		s1, err := p.NewStream()
		if err != nil {
			return err
		}
		s2, err := p.NewStream()
		if err != nil {
			return err
		}
		edge := make([]float64, n)
		for i := range edge {
			edge[i] = float64(r*n + i)
		}
		out, _ := fromSlice(p, edge)
		fromL, _ := NewNdarray[float64](p, n)
		fromR, _ := NewNdarray[float64](p, n)
		l, rt := (r+size-1)%size, (r+1)%size
		err = c.Group(func(g *Comm) error {
			return errors.Join(g.SendOn(s1, out, l), g.SendOn(s1, out, rt), g.RecvOn(s2, fromL, l), g.RecvOn(s2, fromR, rt))
		})
		if err != nil {
			return err
		}
		gl, _ := fromL.ToSlice()
		gr, _ := fromR.ToSlice()
		if err := expect("from left", gl, func(i int) float64 { return float64(l*n + i) }); err != nil {
			return err
		}
		return expect("from right", gr, func(i int) float64 { return float64(rt*n + i) })
	})
}

// TestCommGraphReplays captures an AllReduce: every launch of the graph
// reduces again.
func TestCommGraphReplays(t *testing.T) {
	inGroup(t, 2, func(r int, p *Program, c *Comm) error {
		s, _ := p.NewStream()
		x, _ := fromSlice(p, []int32{1, int32(r)})
		g, err := s.Capture(func() error { return c.AllReduceOn(s, x, Sum) })
		if err != nil {
			return err
		}
		defer g.Close()
		for range 3 {
			if err := g.LaunchOn(s); err != nil {
				return err
			}
		}
		got, _ := x.ToSlice()
		if fmt.Sprint(got) != "[8 4]" { // [1 r] → [2 1] → [4 2] → [8 4]
			return fmt.Errorf("after 3 replays: %v", got)
		}
		return s.Synchronize()
	})
}

func TestCommArgumentErrors(t *testing.T) {
	inGroup(t, 2, func(r int, p *Program, c *Comm) error {
		s := p.DefaultStream()
		x, _ := NewNdarray[float32](p, 4)
		q, _ := Init(WithArch(CPU))
		defer q.Close()
		foreign, _ := NewNdarray[float32](q, 4)
		big, _ := NewNdarray[float32](p, 5)
		bools, _ := NewNdarray[bool](p, 4)
		type mixed struct {
			A int32
			B float32
		}
		mix, _ := NewNdarray[mixed](p, 4)
		for _, tc := range []struct {
			err    error
			target error
			says   string
		}{
			{c.AllReduceOn(s, nil, Sum), ErrInvalidArgument, "nil x"},
			{c.AllReduceOn(s, foreign, Sum), ErrForeign, "another Program"},
			{c.AllReduceOn(s, x, ReduceOp(9)), ErrInvalidArgument, "ReduceOp(9)"},
			{c.AllReduceIntoOn(s, x, big, Sum), ErrInvalidArgument, "shape"},
			{c.AllReduceOn(s, bools, Sum), ErrInvalidArgument, "cannot be reduced"},
			{c.AllReduceOn(s, mix, Sum), ErrInvalidArgument, "mix scalar types"},
			{c.BroadcastOn(s, x, 2), ErrInvalidArgument, "root 2 is not a rank"},
			{c.SendOn(s, x, -1), ErrInvalidArgument, "peer -1"},
			{c.AllGatherOn(s, big, x), ErrInvalidArgument, "must hold the group's 2"},
			{c.ReduceScatterOn(s, x, x, Sum), ErrInvalidArgument, "must hold the group's 2"},
			{c.Group(nil), ErrInvalidArgument, "nil function"},
			{c.Group(func(g *Comm) error { return g.Group(func(*Comm) error { return nil }) }), ErrInvalidArgument, "do not nest"},
		} {
			if !errors.Is(tc.err, tc.target) || !strings.Contains(tc.err.Error(), tc.says) {
				return fmt.Errorf("got %v, want %v saying %q", tc.err, tc.target, tc.says)
			}
		}
		var kept *Comm
		if err := c.Group(func(g *Comm) error { kept = g; return nil }); err != nil {
			return err
		}
		if err := kept.SendOn(s, x, 0); !errors.Is(err, ErrInvalidArgument) {
			return fmt.Errorf("a Group's handle used after: %v", err)
		}
		// The group still works: nothing above reached the transport.
		if err := c.AllReduceOn(s, x, Sum); err != nil {
			return err
		}
		return s.Synchronize()
	})
}

func TestCommClosed(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	c, err := NewComm(p, CommRank(0, 1, ""))
	check(t, err)
	x := newNdarray[float32](t, p, 2)
	check(t, c.AllReduceOn(p.DefaultStream(), x, Sum)) // a group of one
	check(t, c.Close())
	check(t, c.Close())
	wantErr(t, c.AllReduceOn(p.DefaultStream(), x, Sum), ErrClosed)
	if _, err := NewComm(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("NewComm(nil): %v", err)
	}
	if _, err := NewComm(p, CommRank(3, 2, "x:1")); err == nil || !strings.Contains(err.Error(), "outside a group of 2") {
		t.Fatalf("rank 3 of 2: %v", err)
	}
}

// TestCommMemberDies: a member that ends without closing its Comm, in
// the middle of a collective the others are in, breaks the group: the
// others' Synchronize reports ErrCommBroken naming it, promptly.
func TestCommMemberDies(t *testing.T) {
	start := time.Now()
	err := runGroup(t, 3, func(r int, p *Program, c *Comm) error {
		s := p.DefaultStream()
		x, _ := NewNdarray[float32](p, 1024)
		if r == 1 {
			time.Sleep(50 * time.Millisecond)
			c.c.t.Close() // its connections drop, as at a crash
			c.c.g.Close()
			return nil
		}
		if err := c.AllReduceOn(s, x, Sum); err != nil {
			return err
		}
		err := s.Synchronize()
		if !errors.Is(err, ErrCommBroken) {
			return fmt.Errorf("Synchronize: %v, want ErrCommBroken", err)
		}
		if !errors.Is(c.Err(), ErrCommBroken) {
			return fmt.Errorf("Err: %v", c.Err())
		}
		if err := c.AllReduceOn(s, x, Sum); !errors.Is(err, ErrCommBroken) {
			return fmt.Errorf("a call after the break: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestCommProgramCloseAborts(t *testing.T) {
	err := runGroup(t, 2, func(r int, p *Program, c *Comm) error {
		x, _ := NewNdarray[float32](p, 8)
		if r == 0 {
			// Rank 1 never makes the call: Close must not wait for it.
			if err := c.AllReduceOn(p.DefaultStream(), x, Sum); err != nil {
				return err
			}
			done := make(chan error, 1)
			go func() { done <- p.Close() }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				return errors.New("Program.Close waited for a collective whose peer never came")
			}
			return nil
		}
		select {
		case <-c.c.g.Broken():
		case <-time.After(5 * time.Second):
			return errors.New("rank 1's group did not break when rank 0's Program closed")
		}
		if !strings.Contains(c.Err().Error(), "Program was closed") {
			return fmt.Errorf("cause: %v", c.Err())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestInitEnvironmentDefaults(t *testing.T) {
	t.Setenv(EnvArch, "cpu")
	t.Setenv(EnvDevice, "0")
	p := initProgram(t)
	if p.Arch() != CPU {
		t.Fatalf("QD_ARCH=cpu: %v", p.Arch())
	}
	p.Close()
	t.Setenv(EnvArch, "tpu")
	if _, err := Init(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), `QD_ARCH="tpu"`) {
		t.Fatalf("QD_ARCH=tpu: %v", err)
	}
	t.Setenv(EnvArch, "cpu")
	t.Setenv(EnvDevice, "-1")
	if _, err := Init(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "QD_DEVICE") {
		t.Fatalf("QD_DEVICE=-1: %v", err)
	}
	t.Setenv(EnvDevice, "1") // the option wins over the environment
	p = initProgram(t, WithDevice(0))
	p.Close()
}

// nopTransport enqueues nothing: the root's own cost of a call.
type nopTransport struct{}

func (nopTransport) Run(backend.Stream, []comm.Call) error { return nil }
func (nopTransport) Err() error                            { return nil }
func (nopTransport) Abort(error)                           {}
func (nopTransport) Close() error                          { return nil }

// BenchmarkCommCallOverhead is what a collective costs in package qd
// before its transport: checks, the stream's gate, pins and use tracking.
// It is the root's share of the host-cost bar (a 4 KiB all-reduce within
// 1.2× a raw ncclAllReduce), measured where there is no GPU. The stub
// transport, a type qd does not know, costs one copy of the call list
// (80 B, 1 alloc), which the NCCL and CPU transports do not.
func BenchmarkCommCallOverhead(b *testing.B) {
	p := initProgram(b, WithArch(CPU))
	defer p.Close()
	c, err := NewComm(p, CommRank(0, 1, ""))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	real := c.c.t
	c.c.t = nopTransport{}
	defer func() { c.c.t = real }()
	s := newStream(b, p)
	x := newNdarray[float32](b, p, 1024)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.AllReduceOn(s, x, Sum); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCommIssueOrderAcrossStreams: every member issues a on s1, then b on
// s2, but earlier work holds s1 back on rank 0 and s2 on rank 1, so the
// two run in opposite orders there; the calls still pair as issued.
func TestCommIssueOrderAcrossStreams(t *testing.T) {
	inGroup(t, 2, func(r int, p *Program, c *Comm) error {
		slow, err := buildKernel(p, suitekernels.SlowWrite())
		if err != nil {
			return err
		}
		s1, _ := p.NewStream()
		s2, _ := p.NewStream()
		a, _ := fromSlice(p, []int32{1})
		b, _ := fromSlice(p, []int32{100})
		junk, _ := NewNdarray[float32](p, 4)
		state, _ := NewNdarray[int64](p, 1)
		held := s1
		if r == 1 {
			held = s2
		}
		if err := slow.LaunchOn(held, junk, float32(1), state, int64(3_000_000)); err != nil {
			return err
		}
		if err := c.AllReduceOn(s1, a, Sum); err != nil {
			return err
		}
		if err := c.AllReduceOn(s2, b, Sum); err != nil {
			return err
		}
		ga, _ := a.ToSlice()
		gb, _ := b.ToSlice()
		if err := p.Synchronize(); err != nil {
			return err
		}
		if ga[0] != 2 || gb[0] != 200 {
			return fmt.Errorf("a = %d, b = %d, want 2 and 200", ga[0], gb[0])
		}
		return p.Synchronize()
	})
}

// TestCommProgramCloseRacesCalls: Program.Close while another goroutine
// makes collectives neither deadlocks nor panics.
func TestCommProgramCloseRacesCalls(t *testing.T) {
	p := initProgram(t, WithArch(CPU))
	c, err := NewComm(p, CommRank(0, 1, ""))
	check(t, err)
	x := newNdarray[float32](t, p, 8)
	stop := make(chan struct{})
	go func() {
		defer close(stop)
		for c.AllReduceOn(p.DefaultStream(), x, Sum) == nil {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Program.Close and a collective deadlocked")
	}
	<-stop
	wantErr(t, c.AllReduceOn(p.DefaultStream(), x, Sum), ErrClosed)
}

// TestCommProgramCloseWhileWaiting: a goroutine waits in Synchronize for a
// collective whose peer never comes; Program.Close aborts it and returns.
func TestCommProgramCloseWhileWaiting(t *testing.T) {
	err := runGroup(t, 2, func(r int, p *Program, c *Comm) error {
		if r == 1 {
			<-c.c.g.Broken() // never calls; waits for rank 0's abort
			return nil
		}
		x, _ := NewNdarray[float32](p, 8)
		s := p.DefaultStream()
		if err := c.AllReduceOn(s, x, Sum); err != nil {
			return err
		}
		waited := make(chan error, 1)
		go func() { waited <- s.Synchronize() }()
		time.Sleep(50 * time.Millisecond)
		closed := make(chan error, 1)
		go func() { closed <- p.Close() }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			return errors.New("Program.Close waited for a collective's peer")
		}
		if err := <-waited; err == nil {
			return errors.New("the Synchronize of the aborted collective returned no error")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCommNilAndOverlap(t *testing.T) {
	var c *Comm
	p := initProgram(t, WithArch(CPU))
	defer p.Close()
	x := newNdarray[float32](t, p, 8)
	wantErr(t, c.AllReduceOn(p.DefaultStream(), x, Sum), ErrInvalidArgument)
	wantErr(t, (&Comm{}).SendOn(p.DefaultStream(), x, 0), ErrInvalidArgument)
	wantErr(t, c.Group(func(*Comm) error { return nil }), ErrInvalidArgument)
	if c.Rank() != 0 || c.Size() != 0 || c.String() != "Comm(nil)" || c.Err() != nil || c.Close() != nil {
		t.Fatal("a nil Comm's accessors")
	}
	c.Abort()
	one, err := NewComm(p, CommRank(0, 1, ""))
	check(t, err)
	defer one.Close()
	m := newNdarray[float32](t, p, 4, 2)
	lo, hi := must(m.Rows(0, 2))(t), must(m.Rows(1, 3))(t)
	if err := one.AllReduceIntoOn(p.DefaultStream(), lo, hi, Sum); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "share memory") {
		t.Fatalf("overlapping views: %v", err)
	}
}
