package qd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/comm"
	"github.com/quadrants-go/qd/internal/ir"
)

// Process groups and collectives (docs/distributed.md): a program that
// outgrows one device runs as a process per device, and the processes
// join a group with NewComm. A Comm's collectives are stream operations
// like copies: ordered on the stream they are given, tracked (a host read
// or Close of an array waits for them), capturable into graphs. GPUs move
// the data with NCCL (RCCL on AMD); the CPU backend moves it between
// processes over TCP, so that programs and their tests run anywhere.

// ErrCommBroken is matched by the errors of a Comm whose group broke: a
// member process died or aborted, its host stopped answering, a
// collective failed, or the members' calls went out of step. Every later
// call of every member fails with it; Close the Comm.
var ErrCommBroken = comm.ErrBroken

// ReduceOp is the reduction of AllReduceOn, ReduceOn and ReduceScatterOn.
type ReduceOp uint8

const (
	Sum  ReduceOp = ReduceOp(comm.Sum)
	Prod ReduceOp = ReduceOp(comm.Prod)
	Max  ReduceOp = ReduceOp(comm.Max)
	Min  ReduceOp = ReduceOp(comm.Min)
	// Avg is the sum divided by the group's size; integers truncate
	// toward zero.
	Avg ReduceOp = ReduceOp(comm.Avg)
)

func (o ReduceOp) String() string { return comm.Op(o).String() }

// Array is any *Ndarray[T]: the collectives take arrays of every element
// type.
type Array interface{ ndArg }

// CommOption configures NewComm.
type CommOption func(*commConfig)

type commConfig struct {
	cfg comm.Config
	err error
	set bool // a rank and size were given (not from the environment)
}

// CommFromEnv takes the group from the environment, as torchrun and
// `qd run` set it: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT
// (and QD_COMM_TOKEN, which qd run sets so that processes of different
// runs never join each other). With none of them set the process is a
// group of one, so a program runs unchanged without a launcher. It is
// NewComm's default.
func CommFromEnv() CommOption {
	return func(c *commConfig) {
		cfg, err := comm.FromEnv(nil)
		keep := c.cfg
		c.cfg, c.err = cfg, err
		c.cfg.JoinTimeout, c.cfg.OpTimeout, c.cfg.PeerTimeout = keep.JoinTimeout, keep.OpTimeout, keep.PeerTimeout
	}
}

// CommRank places the process in a group given in code: rank of size,
// with rank 0 serving the rendezvous on addr ("host:port"; every member
// gives rank 0's address).
func CommRank(rank, size int, addr string) CommOption {
	return func(c *commConfig) {
		c.cfg.Rank, c.cfg.Size, c.cfg.LocalRank, c.cfg.Addr, c.err, c.set = rank, size, rank, addr, nil, true
	}
}

// CommToken sets the token every member must bring (QD_COMM_TOKEN).
func CommToken(token string) CommOption { return func(c *commConfig) { c.cfg.Token = token } }

// CommTimeouts bounds the waits of a group: join, for every rank to
// arrive at the rendezvous (default 5 minutes); peer, for a member's
// host to answer before it is taken for dead (default 30 s; a process that
// exits or is killed is noticed at once); op, on the CPU backend, for a
// peer's data in a collective (default 10 minutes; negative: no bound). A
// zero keeps the default.
func CommTimeouts(join, peer, op time.Duration) CommOption {
	return func(c *commConfig) {
		if join != 0 {
			c.cfg.JoinTimeout = join
		}
		if peer != 0 {
			c.cfg.PeerTimeout = peer
		}
		if op != 0 {
			c.cfg.OpTimeout = op
		}
	}
}

// LocalRank is the process's number on its host (LOCAL_RANK; 0 when it
// is not set): the GPU it should take, as in qd.Init(qd.WithLocalDevice()).
func LocalRank() int {
	n, err := strconv.Atoi(os.Getenv(comm.EnvLocalRank))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// Comm is this process's membership of a group of processes, on one
// Program. Its methods are safe for concurrent use, but every member must
// make the same collective calls in the same order (on one stream, or on
// streams ordered by events), and each pair's Sends and Recvs must pair
// up in order, as with NCCL. Calls pair in the order each member issues
// them. A member whose calls differ from its partners' breaks the group
// on the CPU backend (ErrCommBroken, saying how); NCCL waits for it.
type Comm struct {
	c *commCore
	b *commBatch // the batch of a Group's function; nil outside Group
}

type commCore struct {
	p     *Program
	g     *comm.Group
	t     comm.Transport
	async bool // the transport reports failures by Err only (NCCL)
	cfg   comm.Config

	// life guards Close against calls in flight, as Program.life does.
	// Calls take the Program's lifetime lock first, then this one, as
	// Program.Close (which closes its Comms) does.
	life   sync.RWMutex
	closed atomic.Bool // no more calls
	// released: the transport and the group are closed. A Comm whose
	// NCCL calls a graph captured keeps them until its Program closes,
	// since a replay runs the calls on the communicator.
	released bool // under life
	captured atomic.Bool
	calls    atomic.Uint64 // collectives and Sends/Recvs enqueued
	colls    atomic.Uint64 // collectives enqueued (the group's goodbye says how many)
	notes    sync.Map      // *streamCore → *commNote (async transports)
}

// commNote is the last call a Comm enqueued on a stream, for the error a
// Synchronize of that stream reports once the group is broken.
type commNote struct {
	mu       sync.Mutex
	last     string // the call's name
	n        uint64 // its number among the Comm's calls
	reported bool
}

// NewComm joins the process group the options describe (by default
// CommFromEnv), for the collectives of p. Every member blocks in NewComm
// until all have arrived (CommTimeouts bounds the wait). Members must run
// the same backend kind: all on GPUs (NCCL) or all on the CPU (TCP).
func NewComm(p *Program, opts ...CommOption) (*Comm, error) {
	return NewCommContext(context.Background(), p, opts...)
}

// NewCommContext is NewComm that gives up when ctx is done.
func NewCommContext(ctx context.Context, p *Program, opts ...CommOption) (*Comm, error) {
	const what = "NewComm"
	if p == nil {
		return nil, fmt.Errorf("%w: %s: nil Program", ErrInvalidArgument, what)
	}
	if ctx == nil {
		return nil, fmt.Errorf("%w: %s: nil context", ErrInvalidArgument, what)
	}
	var cc commConfig
	CommFromEnv()(&cc)
	for _, o := range opts {
		if o != nil {
			o(&cc)
		}
	}
	if cc.err != nil {
		return nil, fmt.Errorf("qd: %s: %w", what, cc.err)
	}
	if err := cc.cfg.Check(); err != nil {
		return nil, fmt.Errorf("qd: %s: %w", what, err)
	}
	// The Program is held only around the checks and the registration,
	// not through the rendezvous, which may wait minutes: a Close of the
	// Program meanwhile must not wait for it.
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.exit()
	c := &commCore{p: p, cfg: cc.cfg}
	var err error
	switch p.arch {
	case CPU:
		err = c.joinHost(ctx)
	case CUDA, AMDGPU:
		err = c.joinGPU(ctx)
	default:
		err = fmt.Errorf("collectives on the %s backend: %w (GPUs use NCCL or RCCL, the CPU backend TCP)", p.arch, ErrUnsupported)
	}
	if err != nil {
		return nil, fmt.Errorf("qd: %s (rank %d of %d): %w", what, cc.cfg.Rank, cc.cfg.Size, err)
	}
	c.g.SetCount(c.colls.Load)
	if err := p.enter(); err != nil {
		c.t.Abort(errors.New("its Program was closed while it joined"))
		c.release()
		return nil, err
	}
	defer p.exit()
	p.mu.Lock()
	if p.comms == nil {
		p.comms = make(map[*commCore]struct{})
	}
	p.comms[c] = struct{}{}
	p.ncomm.Add(1)
	p.mu.Unlock()
	return &Comm{c: c}, nil
}

func (c *commCore) joinHost(ctx context.Context) error {
	tasks, ok := c.p.dev.(backend.HostTasker)
	if !ok {
		return fmt.Errorf("the %s device cannot run host tasks: %w", c.p.arch, ErrUnsupported)
	}
	ln, port, err := comm.Listen()
	if err != nil {
		return err
	}
	g, err := comm.Join(ctx, c.cfg, comm.JoinSpec{Transport: "tcp", DataPort: port})
	if err != nil {
		ln.Close()
		return err
	}
	t, err := comm.NewHostTransport(ctx, g, ln, tasks)
	if err != nil {
		g.Abort(err)
		g.Close()
		return err
	}
	c.g, c.t = g, t
	return nil
}

// Rank is the process's rank in the group, from 0 to Size()-1.
func (h *Comm) Rank() int {
	if h == nil || h.c == nil {
		return 0
	}
	return h.c.cfg.Rank
}

// Size is the number of processes in the group.
func (h *Comm) Size() int {
	if h == nil || h.c == nil {
		return 0
	}
	return h.c.cfg.Size
}

// LocalRank is the process's number on its host (LOCAL_RANK).
func (h *Comm) LocalRank() int {
	if h == nil || h.c == nil {
		return 0
	}
	return h.c.cfg.LocalRank
}

func (h *Comm) String() string {
	if h == nil || h.c == nil {
		return "Comm(nil)"
	}
	return fmt.Sprintf("Comm(rank %d of %d, %s)", h.c.cfg.Rank, h.c.cfg.Size, h.c.p.arch)
}

// Err is why the group broke (an error matching ErrCommBroken), or nil
// while it holds.
func (h *Comm) Err() error {
	if h == nil || h.c == nil {
		return nil
	}
	if err := h.c.t.Err(); err != nil {
		return h.c.brokenErr(err)
	}
	return nil
}

func (c *commCore) brokenErr(err error) error {
	if errors.Is(err, ErrCommBroken) {
		return fmt.Errorf("qd: Comm rank %d of %d: %w", c.cfg.Rank, c.cfg.Size, err)
	}
	return fmt.Errorf("qd: Comm rank %d of %d: %w: %w", c.cfg.Rank, c.cfg.Size, ErrCommBroken, err)
}

// Abort breaks the group on purpose (this process gives up, say after a
// SynchronizeContext timed out): every member's collectives in flight end
// with an error matching ErrCommBroken that says this rank aborted, and
// later calls fail. Close the Comm afterwards.
func (h *Comm) Abort() {
	if h == nil || h.c == nil || h.c.closed.Load() {
		return
	}
	h.c.t.Abort(errors.New("Comm.Abort was called"))
}

// Close leaves the group. It waits for nothing: call it once this
// process's collectives are done (a Synchronize of their streams).
// Members that close after their last call leave the others unharmed; a
// member that closes before a collective the others make breaks the group
// for them when they make it (its goodbye says how many it made). Close
// of a broken Comm aborts its transport (ncclCommAbort). A Comm whose
// calls a graph captured on a GPU keeps its communicator, for the graph's
// replays, until its Program closes. Close is idempotent; afterwards
// every method returns ErrClosed.
func (h *Comm) Close() error {
	if h == nil || h.c == nil {
		return nil
	}
	return h.c.close(false)
}

// close ends calls on c and releases its transport and group, unless a
// graph may still replay its NCCL calls and final is false (Comm.Close
// rather than its Program's).
func (c *commCore) close(final bool) error {
	c.life.Lock()
	defer c.life.Unlock()
	c.closed.Store(true)
	if c.released || (!final && c.async && c.captured.Load()) {
		return nil
	}
	if !final {
		c.p.mu.Lock()
		if _, ok := c.p.comms[c]; ok {
			delete(c.p.comms, c)
			c.p.ncomm.Add(-1)
		}
		c.p.mu.Unlock()
	}
	return c.release()
}

// release closes the transport and leaves the group; the caller holds
// life or has not published c.
func (c *commCore) release() error {
	c.released = true
	if err := c.t.Err(); err != nil {
		c.t.Abort(err) // peers must not take the goodbye for a clean one
	}
	return errors.Join(c.t.Close(), c.g.Close())
}

// enter starts a call: the Comm is open. Whether its group holds is the
// transport's to say, in Run (one atomic load there): asking it here
// would poll NCCL on every call.
func (c *commCore) enter(what string) error {
	c.life.RLock()
	if c.closed.Load() {
		c.life.RUnlock()
		return fmt.Errorf("qd: %s: %w", what, closedErr("Comm"))
	}
	return nil
}

func (c *commCore) exit() { c.life.RUnlock() }

// commItem is one call of a Group: the transport's calls, the arrays
// they use, and the stream.
type commItem struct {
	s     *Stream
	what  string
	calls []comm.Call
	ops   []operand
	zs    []zeroUse
}

// commBatch collects the calls of a Group's function.
type commBatch struct {
	mu    sync.Mutex
	items []commItem
	done  bool
}

// submit enqueues call on s, or adds it to h's batch inside a Group. It
// is the path of every collective, kept free of allocations: ops and zs
// stay on the caller's stack unless a Group copies them.
func (h *Comm) submit(s *Stream, what string, call comm.Call, ops []operand, zs []zeroUse) error {
	if b := h.b; b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.done {
			return fmt.Errorf("%w: %s: the Comm handle of a Group was used after the Group's function returned", ErrInvalidArgument, what)
		}
		b.items = append(b.items, commItem{s: s, what: what, calls: []comm.Call{call}, ops: append([]operand(nil), ops...), zs: append([]zeroUse(nil), zs...)})
		return nil
	}
	c := h.c
	if err := c.p.enter(); err != nil {
		return err
	}
	defer c.p.exit()
	if err := c.enter(what); err != nil {
		return err
	}
	defer c.exit()
	one := [1]comm.Call{call}
	return c.enqueue(s, what, one[:], ops, zs)
}

// enqueue enqueues calls on s; the caller holds the Program and c.
func (c *commCore) enqueue(s *Stream, what string, calls []comm.Call, ops []operand, zs []zeroUse) error {
	k := uint64(0)
	for i := range calls {
		if calls[i].Kind != comm.Send && calls[i].Kind != comm.Recv {
			k++
		}
	}
	if k > 0 {
		if err := c.g.CheckLeft(c.colls.Load() + k); err != nil {
			return fmt.Errorf("qd: %s: %w", what, c.brokenErr(err))
		}
		c.colls.Add(k)
	}
	n := c.calls.Add(uint64(len(calls)))
	err := c.p.enqueueOn(s, what, ops, func(bs backend.Stream) error {
		// Under s's gate (enqueueGated): its capture state holds.
		if s.c.cap.Load() != nil {
			c.captured.Store(true)
		}
		return c.run(bs, calls)
	}, zs...)
	if err != nil {
		if terr := c.t.Err(); terr != nil {
			return fmt.Errorf("qd: %s: %w", what, c.brokenErr(terr))
		}
		return err
	}
	if c.async {
		c.note(s.c, what, n)
	}
	return nil
}

// run is c.t.Run through the transport's own type where qd knows it:
// neither keeps the list, which can then stay on the caller's stack (an
// interface call would make every call allocate it).
func (c *commCore) run(bs backend.Stream, calls []comm.Call) error {
	switch t := c.t.(type) {
	case *ncclTransport:
		return t.Run(bs, calls)
	case *comm.HostTransport:
		return t.Run(bs, calls)
	}
	return c.t.Run(bs, slices.Clone(calls))
}

// note records the last call enqueued on sc: its name and number.
func (c *commCore) note(sc *streamCore, what string, n uint64) {
	v, ok := c.notes.Load(sc)
	if !ok {
		v, _ = c.notes.LoadOrStore(sc, &commNote{})
	}
	nt := v.(*commNote)
	nt.mu.Lock()
	nt.last, nt.n = what, n
	nt.mu.Unlock()
}

// withCommErrs is err, a Synchronize's result for sc, joined with the
// errors of sc's Comms (commErrs): err itself while the Program has none.
func (sc *streamCore) withCommErrs(err error) error {
	if sc.p.ncomm.Load() == 0 {
		return err
	}
	if ce := sc.commErrs(); ce != nil {
		return errors.Join(err, ce)
	}
	return err
}

// commErrs is the error a Synchronize of sc adds for the Comms of sc's
// Program whose transports report failures only through Err (NCCL: a
// kernel that NCCL aborted ends without an error of the stream): once per
// stream and Comm, naming the last call enqueued there.
func (sc *streamCore) commErrs() error {
	p := sc.p
	p.mu.Lock()
	cs := make([]*commCore, 0, len(p.comms))
	for c := range p.comms {
		if c.async {
			cs = append(cs, c)
		}
	}
	p.mu.Unlock()
	var errs []error
	for _, c := range cs {
		v, ok := c.notes.Load(sc)
		if !ok {
			continue
		}
		err := c.t.Err()
		if err == nil {
			continue
		}
		n := v.(*commNote)
		n.mu.Lock()
		if !n.reported {
			n.reported = true
			errs = append(errs, fmt.Errorf("qd: %s (call %d of the Comm) and the calls before it on this stream may not have completed: %w", n.last, n.n, c.brokenErr(err)))
		}
		n.mu.Unlock()
	}
	return errors.Join(errs...)
}

// abortBusyComms aborts, as a CPU Program closes, its Comms whose calls
// are queued or running: its Close stops the work in flight, and their
// host tasks would otherwise wait for peers that may never come. It runs
// before Close takes the Program's lifetime lock, which a goroutine
// waiting for such a call (a Synchronize) holds shared.
func (p *Program) abortBusyComms() {
	p.mu.Lock()
	var busy []*commCore
	for c := range p.comms {
		if ht, ok := c.t.(*comm.HostTransport); ok && ht.InFlight() {
			busy = append(busy, c)
		}
	}
	p.mu.Unlock()
	for _, c := range busy {
		c.t.Abort(errors.New("its Program was closed with the Comm's calls still running"))
	}
}

// closeComms closes p's Comms as p closes, after its work.
func (p *Program) closeComms() error {
	p.mu.Lock()
	cs := make([]*commCore, 0, len(p.comms))
	for c := range p.comms {
		cs = append(cs, c)
	}
	clear(p.comms)
	p.ncomm.Store(0)
	p.mu.Unlock()
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.close(true))
	}
	return errors.Join(errs...)
}

// Arguments.

func (c *commCore) array(what, name string, a Array) (*ndCore, error) {
	if a == nil {
		return nil, fmt.Errorf("%w: %s: nil %s", ErrInvalidArgument, what, name)
	}
	nc := a.core()
	switch {
	case nc == nil:
		return nil, fmt.Errorf("%w: %s: nil %s", ErrInvalidArgument, what, name)
	case nc.p != c.p:
		return nil, fmt.Errorf("%w: %s: %s belongs to another Program than the Comm's", ErrForeign, what, name)
	case nc.isClosed():
		return nil, fmt.Errorf("qd: %s: %w", what, closedErr(name+" Ndarray"))
	}
	return nc, nil
}

func (c *commCore) rankArg(what, name string, r int) error {
	if r < 0 || r >= c.cfg.Size {
		return fmt.Errorf("%w: %s: %s %d is not a rank of the group (0 to %d)", ErrInvalidArgument, what, name, r, c.cfg.Size-1)
	}
	return nil
}

func opArg(what string, op ReduceOp) error {
	if op > Avg {
		return fmt.Errorf("%w: %s: ReduceOp(%d) is not one of qd.Sum, Prod, Max, Min, Avg", ErrInvalidArgument, what, uint8(op))
	}
	return nil
}

// reduceType is the element type a reduction of arrays of nc's elements
// combines: a scalar, or the one scalar type every leaf of a record has
// when the leaves fill it (qd.Vec3[float32] reduces as 3 float32s).
func reduceType(what string, nc *ndCore) (comm.DType, int, error) {
	l := nc.lay
	t, per := l.scalar, 1
	if l.rec != nil {
		t, per = ir.Invalid, len(l.rec.Leaves)
		for _, f := range l.rec.Leaves {
			if t == ir.Invalid {
				t = f.Type
			} else if f.Type != t {
				return 0, 0, fmt.Errorf("%w: %s: elements of type %s mix scalar types (%s and %s), which a reduction cannot combine: reduce each field's array", ErrInvalidArgument, what, l.name, goTypeName(t), goTypeName(f.Type))
			}
		}
	}
	dt, ok := commDType(t)
	if !ok {
		return 0, 0, fmt.Errorf("%w: %s: elements of type %s cannot be reduced (%s has no arithmetic here; Broadcast, AllGather, Send and Recv move any element type)", ErrInvalidArgument, what, l.name, goTypeName(t))
	}
	if per*dt.Size() != l.size {
		return 0, 0, fmt.Errorf("%w: %s: elements of type %s have padding between their %s fields, which a reduction cannot skip", ErrInvalidArgument, what, l.name, goTypeName(t))
	}
	return dt, per, nil
}

func commDType(t ir.Type) (comm.DType, bool) {
	switch t {
	case ir.I8:
		return comm.Int8, true
	case ir.U8:
		return comm.Uint8, true
	case ir.I16:
		return comm.Int16, true
	case ir.U16:
		return comm.Uint16, true
	case ir.I32:
		return comm.Int32, true
	case ir.U32:
		return comm.Uint32, true
	case ir.I64:
		return comm.Int64, true
	case ir.U64:
		return comm.Uint64, true
	case ir.F32:
		return comm.Float32, true
	case ir.F64:
		return comm.Float64, true
	}
	return 0, false
}

func sameElems(what string, dst, src *ndCore) error {
	if dst.lay != src.lay {
		return fmt.Errorf("%w: %s: dst has elements of type %s, src of type %s", ErrInvalidArgument, what, dst.lay.name, src.lay.name)
	}
	return nil
}
