package comm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Member is one process of a group, as the rendezvous saw it.
type Member struct {
	Rank     int
	Host     string // the host name it reported
	PID      int
	DataAddr string // where it accepts the CPU transport's connections, or ""
}

func (m Member) String() string {
	return fmt.Sprintf("rank %d (pid %d on %s)", m.Rank, m.PID, m.Host)
}

// JoinSpec is what a process brings to the rendezvous besides its Config.
type JoinSpec struct {
	// Transport names the data path ("tcp", "nccl"): every member must
	// bring the same, or the group is refused.
	Transport string
	// DataPort is the port of the member's data listener (the CPU
	// transport's), or 0. Its host is the address rank 0 sees the member
	// at (MASTER_ADDR for rank 0 itself).
	DataPort int
	// Blob, on rank 0, makes the bytes every member receives (NCCL's
	// unique id); nil for none.
	Blob func() ([]byte, error)
}

// Group is a joined process group: its members, rank 0's blob, and the
// control connections that watch for members that die.
type Group struct {
	cfg     Config
	Members []Member // by rank
	Blob    []byte

	links []*link // rank 0: one per member (nil for itself); others: links[0]

	mu       sync.Mutex
	cause    error
	isBroken atomic.Bool // cause is set
	broken   chan struct{}
	onBreak  []func(error)
	closed   bool
	left     []bool // rank 0: the members that said bye
	stop     chan struct{}
	stopped  sync.Once

	// count is how many collectives this member has issued (SetCount);
	// leftAt, how many each member that left cleanly had issued: a member
	// whose collectives outnumber a departed member's waits for a call
	// that will never come, so the group breaks (CheckLeft).
	count   func() uint64
	leftAt  map[int]uint64
	anyLeft atomic.Bool
}

// Rank and Size are the process's place in the group.
func (g *Group) Rank() int { return g.cfg.Rank }
func (g *Group) Size() int { return g.cfg.Size }

// Config is the group's configuration, durations filled in.
func (g *Group) Config() Config { return g.cfg }

// ErrBroken is matched by the errors of a broken group: a member died or
// aborted, or a collective failed.
var ErrBroken = errors.New("process group broken")

type brokenError struct{ msg string }

func (e *brokenError) Error() string        { return e.msg }
func (e *brokenError) Is(target error) bool { return target == ErrBroken }

// Broken returns a channel closed when the group breaks.
func (g *Group) Broken() <-chan struct{} { return g.broken }

// Cause is why the group broke, nil while it holds. It is on the path of
// every collective: one atomic load while the group holds.
func (g *Group) Cause() error {
	if !g.isBroken.Load() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cause
}

// OnBreak calls f (once, on its own goroutine's time) when the group
// breaks: at once when it is already broken.
func (g *Group) OnBreak(f func(error)) {
	g.mu.Lock()
	if g.cause != nil {
		c := g.cause
		g.mu.Unlock()
		f(c)
		return
	}
	g.onBreak = append(g.onBreak, f)
	g.mu.Unlock()
}

// Join joins the group cfg describes: rank 0 serves the rendezvous on
// cfg.Addr until every rank has arrived; the others dial it until it
// answers. It returns when every member has arrived (or at the join
// timeout, or when ctx is done), and from then on watches the members.
func Join(ctx context.Context, cfg Config, spec JoinSpec) (*Group, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	g := &Group{cfg: cfg, broken: make(chan struct{}), stop: make(chan struct{})}
	host, _ := os.Hostname()
	me := Member{Rank: cfg.Rank, Host: host, PID: os.Getpid()}
	if cfg.Size == 1 {
		if spec.Blob != nil {
			b, err := spec.Blob()
			if err != nil {
				return nil, err
			}
			g.Blob = b
		}
		g.Members = []Member{me}
		return g, nil
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.JoinTimeout)
	defer cancel()
	var err error
	if cfg.Rank == 0 {
		err = g.serve(ctx, me, spec)
	} else {
		err = g.dial(ctx, me, spec)
	}
	if err != nil {
		return nil, err
	}
	g.watch()
	return g, nil
}

func (g *Group) hello(me Member, spec JoinSpec) []byte {
	var e enc
	e.u64(protoMagic)
	e.u64(protoVersion)
	e.str(g.cfg.Token)
	e.int(me.Rank)
	e.int(g.cfg.Size)
	e.str(spec.Transport)
	e.int(spec.DataPort)
	e.str(me.Host)
	e.int(me.PID)
	return e.b
}

// serve is rank 0's side of the rendezvous.
func (g *Group) serve(ctx context.Context, me Member, spec JoinSpec) error {
	host, port, err := net.SplitHostPort(g.cfg.Addr)
	if err != nil {
		return fmt.Errorf("%w: rendezvous address %q: %v", ErrConfig, g.cfg.Addr, err)
	}
	bind := ""
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		bind = host // a group of one host: stay off the network
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(bind, port))
	if err != nil {
		return fmt.Errorf("rank 0: cannot serve the rendezvous on port %s (%s): %w", port, EnvMasterPort, err)
	}
	defer ln.Close()
	stopAccept := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopAccept()

	me.DataAddr = dataAddr(host, spec.DataPort)
	g.Members = make([]Member, g.cfg.Size)
	g.Members[0] = me
	g.links = make([]*link, g.cfg.Size)
	g.left = make([]bool, g.cfg.Size)
	arrived := 1
	var refused []string
	fail := func(err error) error {
		for _, l := range g.links {
			if l != nil {
				l.c.Close()
			}
		}
		return err
	}
	for arrived < g.cfg.Size {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				err := g.joinTimeout(ctx, arrived)
				if len(refused) > 0 {
					err = fmt.Errorf("%w; refused: %s", err, strings.Join(refused, "; "))
				}
				return fail(err)
			}
			return fail(fmt.Errorf("rank 0: rendezvous: %w", err))
		}
		m, why := g.admit(c, spec)
		if why != "" {
			refused = append(refused, fmt.Sprintf("%s from %s: %s", who(m), c.RemoteAddr(), why))
			l := &link{c: c}
			var e enc
			e.str(why)
			l.send(frRefuse, e.b, time.Second)
			c.Close()
			continue
		}
		g.Members[m.Rank] = m
		g.links[m.Rank] = &link{c: c}
		arrived++
	}
	if spec.Blob != nil {
		b, err := spec.Blob()
		if err != nil {
			return fail(err)
		}
		g.Blob = b
	}
	var e enc
	e.int(g.cfg.Size)
	for _, m := range g.Members {
		e.int(m.Rank)
		e.str(m.Host)
		e.int(m.PID)
		e.str(m.DataAddr)
	}
	e.bytes(g.Blob)
	for _, l := range g.links[1:] {
		if err := l.send(frTable, e.b, g.cfg.PeerTimeout); err != nil {
			return fail(fmt.Errorf("rank 0: rendezvous: sending the group to its members: %w", err))
		}
	}
	return nil
}

func who(m Member) string {
	if m.PID == 0 {
		return "a process"
	}
	return m.String()
}

// joinTimeout says which ranks never arrived.
func (g *Group) joinTimeout(ctx context.Context, arrived int) error {
	var missing []string
	for r, m := range g.Members {
		if m.PID == 0 && r != 0 {
			missing = append(missing, strconv.Itoa(r))
		}
	}
	why := fmt.Sprintf("rank 0: rendezvous on %s: %d of %d ranks arrived; rank(s) %s did not", g.cfg.Addr, arrived, g.cfg.Size, strings.Join(missing, ", "))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s within %v: %w", why, g.cfg.JoinTimeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w", why, context.Cause(ctx))
}

// admit reads a member's hello; why says why it is refused.
func (g *Group) admit(c net.Conn, spec JoinSpec) (Member, string) {
	t, p, err := recvFrame(c, 10*time.Second)
	if err != nil || t != frHello {
		return Member{}, "not a qd process-group hello"
	}
	d := dec{b: p}
	magic, ver := d.u64(), d.u64()
	tok := d.str()
	m := Member{Rank: d.int()}
	size := d.int()
	transport := d.str()
	port := d.int()
	m.Host = d.str()
	m.PID = d.int()
	if d.err != nil || magic != protoMagic {
		return m, "not a qd process-group hello"
	}
	switch {
	case ver != protoVersion:
		return m, fmt.Sprintf("rank 0 speaks protocol version %d, this process %d: build every rank from the same qd", protoVersion, ver)
	case tok != g.cfg.Token:
		return m, fmt.Sprintf("its %s differs from rank 0's: it belongs to another run", EnvToken)
	case size != g.cfg.Size:
		return m, fmt.Sprintf("it says the group has %d ranks (%s), rank 0 says %d", size, EnvWorldSize, g.cfg.Size)
	case m.Rank <= 0 || m.Rank >= g.cfg.Size:
		return m, fmt.Sprintf("rank %d is not a member rank of a group of %d", m.Rank, g.cfg.Size)
	case g.Members[m.Rank].PID != 0:
		return m, fmt.Sprintf("rank %d has already joined, as %s: two processes have the same %s", m.Rank, g.Members[m.Rank], EnvRank)
	case transport != spec.Transport:
		return m, fmt.Sprintf("it moves data by %s, rank 0 by %s: every rank must use the same backend kind (all CPU or all GPU)", transport, spec.Transport)
	}
	if port > 0 {
		h, _, _ := net.SplitHostPort(c.RemoteAddr().String())
		m.DataAddr = dataAddr(h, port)
	}
	return m, ""
}

func dataAddr(host string, port int) string {
	if port <= 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// dial is a member's side of the rendezvous.
func (g *Group) dial(ctx context.Context, me Member, spec JoinSpec) error {
	var d net.Dialer
	var c net.Conn
	var last error
	pause := 20 * time.Millisecond
	for {
		var err error
		c, err = d.DialContext(ctx, "tcp", g.cfg.Addr)
		if err == nil {
			break
		}
		last = err
		select {
		case <-ctx.Done():
			return g.dialTimeout(ctx, fmt.Sprintf("could not reach rank 0's rendezvous at %s (%s:%s): %v", g.cfg.Addr, EnvMasterAddr, EnvMasterPort, last))
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	l := &link{c: c}
	if err := l.send(frHello, g.hello(me, spec), 10*time.Second); err != nil {
		c.Close()
		return fmt.Errorf("rank %d: rendezvous at %s: %w", me.Rank, g.cfg.Addr, err)
	}
	t, p, err := recvFrame(c, 0)
	if err != nil {
		c.Close()
		if ctx.Err() != nil {
			return g.dialTimeout(ctx, fmt.Sprintf("rank 0 at %s did not complete the group (are all %d ranks started?)", g.cfg.Addr, g.cfg.Size))
		}
		return fmt.Errorf("rank %d: rank 0 at %s ended the rendezvous before the group was complete (it gave up waiting for a rank, or exited): %w", me.Rank, g.cfg.Addr, err)
	}
	dc := dec{b: p}
	switch t {
	case frRefuse:
		c.Close()
		return fmt.Errorf("%w: rank %d: rank 0 refused this process: %s", ErrConfig, me.Rank, dc.str())
	case frTable:
	default:
		c.Close()
		return fmt.Errorf("rank %d: rendezvous at %s: unexpected message %d", me.Rank, g.cfg.Addr, t)
	}
	n := dc.int()
	if n != g.cfg.Size {
		dc.fail()
	}
	g.Members = make([]Member, 0, g.cfg.Size)
	for range g.cfg.Size {
		if dc.err != nil {
			break
		}
		m := Member{Rank: dc.int(), Host: dc.str(), PID: dc.int(), DataAddr: dc.str()}
		g.Members = append(g.Members, m)
	}
	g.Blob = dc.bytes()
	if dc.err != nil {
		c.Close()
		return fmt.Errorf("rank %d: rendezvous at %s: %v", me.Rank, g.cfg.Addr, dc.err)
	}
	g.links = []*link{l}
	return nil
}

func (g *Group) dialTimeout(ctx context.Context, why string) error {
	why = fmt.Sprintf("rank %d: %s", g.cfg.Rank, why)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s within %v: %w", why, g.cfg.JoinTimeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w", why, context.Cause(ctx))
}

// watch starts the control goroutines: a reader per link and the
// heartbeat.
func (g *Group) watch() {
	if g.cfg.Rank == 0 {
		for r, l := range g.links {
			if l != nil {
				go g.read(r, l)
			}
		}
	} else {
		go g.read(0, g.links[0])
	}
	go g.beat()
}

func (g *Group) beat() {
	t := time.NewTicker(g.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-g.broken:
			return
		case <-t.C:
		}
		for r, l := range g.links {
			if l != nil && !g.hasLeft(r) {
				l.send(frHeartbeat, nil, g.cfg.PeerTimeout)
			}
		}
	}
}

func (g *Group) hasLeft(r int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.left != nil && g.left[r]
}

// read watches the link to member r (rank 0) or to rank 0 (others).
func (g *Group) read(r int, l *link) {
	who := g.Members[r]
	for {
		t, p, err := recvFrame(l.c, g.cfg.PeerTimeout)
		g.mu.Lock()
		closed := g.closed
		g.mu.Unlock()
		if closed {
			return
		}
		if err != nil {
			var ne net.Error
			why := fmt.Sprintf("%s left the group without closing its Comm (the process ended or its host is unreachable: %v)", who, err)
			if errors.As(err, &ne) && ne.Timeout() {
				why = fmt.Sprintf("%s has not been heard from for %v (its host hung or is unreachable)", who, g.cfg.PeerTimeout)
			}
			g.breakWith(why, r)
			return
		}
		switch t {
		case frHeartbeat:
		case frBye:
			d := dec{b: p}
			at := d.u64()
			g.mu.Lock()
			if g.left != nil {
				g.left[r] = true
			}
			g.mu.Unlock()
			if g.cfg.Rank == 0 {
				var e enc
				e.int(r)
				e.u64(at)
				for q, l := range g.links {
					if l != nil && q != r && !g.hasLeft(q) {
						l.send(frLeft, e.b, time.Second)
					}
				}
			}
			g.noteLeft(r, at)
			return // nothing more comes on the link
		case frLeft:
			d := dec{b: p}
			q, at := d.int(), d.u64()
			if d.err == nil && q >= 0 && q < g.cfg.Size {
				g.noteLeft(q, at)
			}
		case frAbort:
			d := dec{b: p}
			g.breakWith(d.str(), r)
			return
		}
	}
}

// breakWith breaks the group with why: rank 0 tells every other member
// (but from, which told it), a member tells rank 0 unless rank 0 told it.
func (g *Group) breakWith(why string, from int) {
	g.mu.Lock()
	if g.cause != nil || g.closed {
		g.mu.Unlock()
		return
	}
	g.cause = &brokenError{msg: why}
	g.isBroken.Store(true)
	fs := g.onBreak
	g.onBreak = nil
	close(g.broken)
	g.mu.Unlock()
	// Told before the break is acted on, so that a Close right after
	// (a Program closing) does not beat the news to the members.
	var e enc
	e.str(why)
	var wg sync.WaitGroup
	for r, l := range g.links {
		if l != nil && r != from && !g.hasLeft(r) {
			wg.Go(func() { l.send(frAbort, e.b, time.Second) })
		}
	}
	wg.Wait()
	for _, f := range fs {
		f(g.cause)
	}
}

// SetCount tells the group how to count this member's collectives, which
// its goodbye carries.
func (g *Group) SetCount(f func() uint64) {
	g.mu.Lock()
	g.count = f
	g.mu.Unlock()
}

func (g *Group) collectives() uint64 {
	g.mu.Lock()
	f := g.count
	g.mu.Unlock()
	if f == nil {
		return 0
	}
	return f()
}

// CheckLeft says whether this member's collective number n can still be
// joined by every member: not when a member has left the group after
// fewer collectives.
func (g *Group) CheckLeft(n uint64) error {
	if !g.anyLeft.Load() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for r, at := range g.leftAt {
		if n > at {
			return &brokenError{msg: fmt.Sprintf("%s closed its Comm after %d collectives, so this member's collective %d has no partner there", g.Members[r], at, n)}
		}
	}
	return nil
}

// noteLeft records that member r left cleanly after at collectives, and
// breaks the group when this member has issued more.
func (g *Group) noteLeft(r int, at uint64) {
	g.mu.Lock()
	if g.leftAt == nil {
		g.leftAt = map[int]uint64{}
	}
	g.leftAt[r] = at
	g.mu.Unlock()
	g.anyLeft.Store(true)
	if err := g.CheckLeft(g.collectives()); err != nil {
		g.breakWith(err.Error(), -1)
	}
}

// Abort breaks the group because of this process (a failed collective,
// Comm.Abort): every member learns why.
func (g *Group) Abort(cause error) {
	g.breakWith(fmt.Sprintf("%s aborted: %v", g.Members[g.cfg.Rank], cause), -1)
}

// Close leaves the group: the members hear a clean goodbye, not a death.
// It is idempotent.
func (g *Group) Close() error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	broken := g.cause != nil
	g.mu.Unlock()
	g.stopped.Do(func() { close(g.stop) })
	var e enc
	e.u64(g.collectives())
	for r, l := range g.links {
		if l == nil {
			continue
		}
		if !broken && !g.hasLeft(r) {
			l.send(frBye, e.b, time.Second)
		}
		l.c.Close()
	}
	return nil
}
