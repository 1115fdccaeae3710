package qd

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/comm"
)

// The collectives of a Comm. Each enqueues its work on s and returns; the
// work is ordered on s like a copy, and every array it uses is tracked (a
// host read or Close waits for it). Errors of the work are reported by
// the next Synchronize of s. Inside a graph capture on s the call is
// captured, and each launch of the graph runs it again, so every member
// must capture and launch the same collectives.

// AllReduceOn replaces x on every member with op over every member's x,
// elementwise. x must have the same number of elements on every member.
func (h *Comm) AllReduceOn(s *Stream, x Array, op ReduceOp) error {
	return h.allReduce(s, "AllReduceOn", x, x, op)
}

// AllReduceIntoOn sets dst on every member to op over every member's src,
// elementwise; dst and src have the same shape and element type.
func (h *Comm) AllReduceIntoOn(s *Stream, dst, src Array, op ReduceOp) error {
	return h.allReduce(s, "AllReduceIntoOn", dst, src, op)
}

func (h *Comm) allReduce(s *Stream, what string, dst, src Array, op ReduceOp) error {
	if h == nil || h.c == nil {
		return errNilComm(what)
	}
	c := h.c
	var d, sc *ndCore
	var err error
	if what == "AllReduceOn" {
		d, err = c.array(what, "x", dst)
		sc = d
	} else {
		d, sc, err = c.pair(what, dst, src)
	}
	if err != nil {
		return err
	}
	if err := opArg(what, op); err != nil {
		return err
	}
	if d != sc && d.st == sc.st {
		return fmt.Errorf("%w: %s: dst and src share memory (views of one array): reduce in place with AllReduceOn, or into another array", ErrInvalidArgument, what)
	}
	if !sameShape(d.shape[:d.dims], sc.shape[:sc.dims]) {
		return fmt.Errorf("%w: %s: dst of shape %v, src of shape %v: they must be equal", ErrInvalidArgument, what, d.shape[:d.dims], sc.shape[:sc.dims])
	}
	dt, per, err := reduceType(what, d)
	if err != nil {
		return err
	}
	call := comm.Call{Kind: comm.AllReduce, Send: sc.buf, Recv: d.buf, Count: d.n * per, DType: dt, Op: comm.Op(op), Name: what}
	var ops [2]operand
	var zs [2]zeroUse
	no, nz := pairUses(&ops, &zs, dst, d, src, sc)
	return h.submit(s, what, call, ops[:no], zs[:nz])
}

// BroadcastOn copies root's x into x on every other member. Any element
// type moves.
func (h *Comm) BroadcastOn(s *Stream, x Array, root int) error {
	const what = "BroadcastOn"
	if h == nil || h.c == nil {
		return errNilComm(what)
	}
	c := h.c
	a, err := c.array(what, "x", x)
	if err != nil {
		return err
	}
	if err := c.rankArg(what, "root", root); err != nil {
		return err
	}
	call := comm.Call{Kind: comm.Broadcast, Send: a.buf, Recv: a.buf, Count: a.n * a.lay.size, DType: comm.Uint8, Peer: root, Name: what}
	var ops [2]operand
	var zs [2]zeroUse
	no, nz := pairUses(&ops, &zs, x, a, x, a)
	return h.submit(s, what, call, ops[:no], zs[:nz])
}

// ReduceOn replaces root's x with op over every member's x, elementwise;
// the other members' x are left as they are.
func (h *Comm) ReduceOn(s *Stream, x Array, op ReduceOp, root int) error {
	const what = "ReduceOn"
	if h == nil || h.c == nil {
		return errNilComm(what)
	}
	c := h.c
	a, err := c.array(what, "x", x)
	if err != nil {
		return err
	}
	if err := opArg(what, op); err != nil {
		return err
	}
	if err := c.rankArg(what, "root", root); err != nil {
		return err
	}
	dt, per, err := reduceType(what, a)
	if err != nil {
		return err
	}
	call := comm.Call{Kind: comm.Reduce, Send: a.buf, Recv: a.buf, Count: a.n * per, DType: dt, Op: comm.Op(op), Peer: root, Name: what}
	var ops [2]operand
	var zs [2]zeroUse
	no, nz := pairUses(&ops, &zs, x, a, x, a)
	return h.submit(s, what, call, ops[:no], zs[:nz])
}

// AllGatherOn sets dst on every member to every member's src, in rank
// order: dst holds Size() times src's elements (shape [Size()*n] for a
// src of n, or [Size(), ...src's shape]). Any element type moves.
func (h *Comm) AllGatherOn(s *Stream, dst, src Array) error {
	const what = "AllGatherOn"
	if h == nil || h.c == nil {
		return errNilComm(what)
	}
	c := h.c
	d, sc, err := c.pair(what, dst, src)
	if err != nil {
		return err
	}
	if d.n != c.cfg.Size*sc.n {
		return fmt.Errorf("%w: %s: dst has %d elements, src %d: dst must hold the group's %d srcs (%d elements)", ErrInvalidArgument, what, d.n, sc.n, c.cfg.Size, c.cfg.Size*sc.n)
	}
	if d.st == sc.st {
		return fmt.Errorf("%w: %s: dst and src share memory: gather into another array", ErrInvalidArgument, what)
	}
	call := comm.Call{Kind: comm.AllGather, Send: sc.buf, Recv: d.buf, Count: sc.n * sc.lay.size, DType: comm.Uint8, Name: what}
	var ops [2]operand
	var zs [2]zeroUse
	no, nz := pairUses(&ops, &zs, dst, d, src, sc)
	return h.submit(s, what, call, ops[:no], zs[:nz])
}

// ReduceScatterOn sets dst on member r to part r of op over every
// member's src: src holds Size() times dst's elements, part r being
// elements [r*n, (r+1)*n) for a dst of n.
func (h *Comm) ReduceScatterOn(s *Stream, dst, src Array, op ReduceOp) error {
	const what = "ReduceScatterOn"
	if h == nil || h.c == nil {
		return errNilComm(what)
	}
	c := h.c
	d, sc, err := c.pair(what, dst, src)
	if err != nil {
		return err
	}
	if err := opArg(what, op); err != nil {
		return err
	}
	if sc.n != c.cfg.Size*d.n {
		return fmt.Errorf("%w: %s: src has %d elements, dst %d: src must hold the group's %d parts (%d elements)", ErrInvalidArgument, what, sc.n, d.n, c.cfg.Size, c.cfg.Size*d.n)
	}
	if d.st == sc.st {
		return fmt.Errorf("%w: %s: dst and src share memory: scatter into another array", ErrInvalidArgument, what)
	}
	dt, per, err := reduceType(what, d)
	if err != nil {
		return err
	}
	call := comm.Call{Kind: comm.ReduceScatter, Send: sc.buf, Recv: d.buf, Count: d.n * per, DType: dt, Op: comm.Op(op), Name: what}
	var ops [2]operand
	var zs [2]zeroUse
	no, nz := pairUses(&ops, &zs, dst, d, src, sc)
	return h.submit(s, what, call, ops[:no], zs[:nz])
}

// SendOn sends x to member peer, whose matching RecvOn receives it (the
// same number of bytes). A member may send to itself within a Group.
// Two members that send to each other before they receive must put the
// calls in a Group: NCCL's sends wait for their receives.
func (h *Comm) SendOn(s *Stream, x Array, peer int) error {
	return h.p2p(s, "SendOn", comm.Send, x, peer)
}

// RecvOn receives into x what member peer sends with its matching SendOn.
func (h *Comm) RecvOn(s *Stream, x Array, peer int) error {
	return h.p2p(s, "RecvOn", comm.Recv, x, peer)
}

func (h *Comm) p2p(s *Stream, what string, kind comm.Kind, x Array, peer int) error {
	if h == nil || h.c == nil {
		return errNilComm(what)
	}
	c := h.c
	a, err := c.array(what, "x", x)
	if err != nil {
		return err
	}
	if err := c.rankArg(what, "peer", peer); err != nil {
		return err
	}
	call := comm.Call{Kind: kind, Send: a.buf, Recv: a.buf, Count: a.n * a.lay.size, DType: comm.Uint8, Peer: peer, Name: what}
	var ops [2]operand
	var zs [2]zeroUse
	no, nz := pairUses(&ops, &zs, x, a, x, a)
	return h.submit(s, what, call, ops[:no], zs[:nz])
}

// Group runs f, which makes calls on g, and then enqueues them as one
// group: they progress together, as NCCL's ncclGroupStart/End make them,
// so that members may Send to each other before they Recv (a halo
// exchange), and several collectives cost one launch. The calls may be on
// several streams: they then wait for each other's streams' work before,
// and those streams wait for the group after. Nothing is enqueued when f
// returns an error, which Group returns; calls on h itself (not g) while
// f runs are enqueued at once, outside the group.
func (h *Comm) Group(f func(g *Comm) error) error {
	const what = "Comm.Group"
	if h == nil || h.c == nil {
		return errNilComm(what)
	}
	if h.b != nil {
		return fmt.Errorf("%w: %s inside a Group: groups do not nest", ErrInvalidArgument, what)
	}
	if f == nil {
		return fmt.Errorf("%w: %s: nil function", ErrInvalidArgument, what)
	}
	b := &commBatch{}
	err := f(&Comm{c: h.c, b: b})
	b.mu.Lock()
	b.done = true
	items := b.items
	b.mu.Unlock()
	if err != nil || len(items) == 0 {
		return err
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
	s0 := items[0].s
	var others []*Stream
	var calls []comm.Call
	var ops []operand
	var zs []zeroUse
	for _, it := range items {
		if it.s != s0 && !containsStream(others, it.s) {
			others = append(others, it.s)
		}
		calls = append(calls, it.calls...)
		ops = append(ops, it.ops...)
		zs = append(zs, it.zs...)
	}
	for _, o := range others {
		if err := s0.WaitStream(o); err != nil {
			return fmt.Errorf("qd: %s: %w", what, err)
		}
	}
	if err := c.enqueue(s0, what, calls, dedupe(ops), zs); err != nil {
		return err
	}
	for _, o := range others {
		if err := o.WaitStream(s0); err != nil {
			return fmt.Errorf("qd: %s: %w", what, err)
		}
	}
	return nil
}

func containsStream(ss []*Stream, s *Stream) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// dedupe drops repeated arrays: each is pinned once per enqueue.
func dedupe(ops []operand) []operand {
	out := ops[:0:0]
	for _, o := range ops {
		dup := false
		for _, p := range out {
			dup = dup || p.core == o.core
		}
		if !dup {
			out = append(out, o)
		}
	}
	return out
}

func (c *commCore) pair(what string, dst, src Array) (*ndCore, *ndCore, error) {
	d, err := c.array(what, "dst", dst)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.array(what, "src", src)
	if err != nil {
		return nil, nil, err
	}
	if err := sameElems(what, d, s); err != nil {
		return nil, nil, err
	}
	return d, s, nil
}

// pairUses fills ops with the arrays a call on dst and src uses (one when
// they are the same array), and zs with the zero fills of arrays from
// NewNdarrayOn that no work has used yet, which the call must come
// after; it returns how many of each. The caller's arrays stay on its
// stack: this is every collective's path.
func pairUses(ops *[2]operand, zs *[2]zeroUse, dst Array, d *ndCore, src Array, s *ndCore) (int, int) {
	ops[0], zs[0] = operand{d, dst}, zeroUse{st: d.st}
	if s == d {
		return 1, 1
	}
	ops[1] = operand{s, src}
	if s.st == d.st {
		return 2, 1
	}
	zs[1] = zeroUse{st: s.st}
	return 2, 2
}

func errNilComm(what string) error {
	return fmt.Errorf("%w: %s: nil Comm (make one with qd.NewComm)", ErrInvalidArgument, what)
}
