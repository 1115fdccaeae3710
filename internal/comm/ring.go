package comm

import (
	"errors"
	"fmt"
	"sync"
)

// HostCall is a Call over host memory: Send and Recv are the bytes of
// the call's buffers (the same slice for in place).
type HostCall struct {
	Call
	SendBytes, RecvBytes []byte
}

// callID names one execution of a call: its number (collectives in one
// count every member shares, point-to-point messages per pair), given in
// the order the calls were issued, and which execution of it this is (a
// call a graph captured runs once per replay).
type callID struct {
	seq uint64
	gen uint32
	p2p bool
}

func (id callID) at(step int) tag {
	return tag{p2p: id.p2p, seq: id.seq, gen: id.gen, step: uint32(step)}
}

// Number gives calls their numbers, in the order of the calls to Number:
// the order the members issue their calls, which they must keep the same
// (as NCCL requires). The CPU transport numbers a batch when it is
// enqueued, not when its host task runs, so that streams which reach
// their calls in another order than they were issued do not swap them.
func (m *Mesh) Number(calls []HostCall) []uint64 {
	seqs := make([]uint64, len(calls))
	m.seqMu.Lock()
	defer m.seqMu.Unlock()
	for i, c := range calls {
		switch c.Kind {
		case Send:
			seqs[i] = m.sendSeq[c.Peer]
			m.sendSeq[c.Peer]++
		case Recv:
			seqs[i] = m.recvSeq[c.Peer]
			m.recvSeq[c.Peer]++
		default:
			seqs[i] = m.collSeq
			m.collSeq++
		}
	}
	return seqs
}

// ExecNumbered runs calls, numbered by Number, as one group: all at once.
// gen counts the earlier executions of the same numbered calls (a graph's
// replays): every member replays its graph as often, so the members agree
// on it too.
func (m *Mesh) ExecNumbered(calls []HostCall, seqs []uint64, gen uint32) error {
	if err := m.Err(); err != nil {
		return err
	}
	id := func(i int) callID {
		return callID{seq: seqs[i], gen: gen, p2p: calls[i].Kind == Send || calls[i].Kind == Recv}
	}
	if len(calls) == 1 {
		return m.exec(calls[0], id(0))
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { errs[i] = m.exec(c, id(i)) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Mesh) exec(c HostCall, id callID) error {
	var err error
	switch c.Kind {
	case AllReduce:
		err = m.allReduce(c, id)
	case Broadcast:
		err = m.broadcast(c, id)
	case Reduce:
		err = m.reduce(c, id)
	case AllGather:
		err = m.allGather(c, id)
	case ReduceScatter:
		err = m.reduceScatter(c, id)
	case Send:
		err = m.send(c.Peer, m.hdr(c, id.at(0)), c.SendBytes[:c.Count*c.DType.Size()])
	case Recv:
		h := m.hdr(c, id.at(0))
		h.kind, h.recvSide = Send, true
		err = m.recv(c.Peer, h, c.RecvBytes[:c.Count*c.DType.Size()])
	default:
		err = fmt.Errorf("comm: unknown call %v", c.Kind)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	return nil
}

func (m *Mesh) hdr(c HostCall, t tag) header {
	return header{kind: c.Kind, dtype: c.DType, op: c.Op, tag: t, count: uint64(c.Count)}
}

// segment is the byte range of part i of n of count elements of size es.
func segment(count, es, i, n int) (int, int) {
	return i * count / n * es, (i + 1) * count / n * es
}

// both runs a send and a receive at once and returns the first error.
func both(send, recv func() error) error {
	errc := make(chan error, 1)
	go func() { errc <- send() }()
	err := recv()
	if e := <-errc; err == nil {
		err = e
	}
	return err
}

// allReduce is the ring algorithm: a reduce-scatter, after which member r
// holds the total of part r+1, then an all-gather of the parts. Every part
// is summed in one order and copied out from one member, so every member
// ends with the same bits.
func (m *Mesh) allReduce(c HostCall, id callID) error {
	es, n, r := c.DType.Size(), m.size, m.rank
	dst := c.RecvBytes[:c.Count*es]
	copy(dst, c.SendBytes[:c.Count*es])
	if n == 1 {
		finish(c.DType, c.Op, dst, n)
		return nil
	}
	right, left := (r+1)%n, (r+n-1)%n
	tmp := make([]byte, (c.Count/n+1)*es)
	for k := range n - 1 {
		si, ri := (r-k+n)%n, (r-k-1+n)%n
		slo, shi := segment(c.Count, es, si, n)
		rlo, rhi := segment(c.Count, es, ri, n)
		t := tmp[:rhi-rlo]
		h := m.hdr(c, id.at(k))
		if err := both(func() error { return m.send(right, h, dst[slo:shi]) }, func() error { return m.recv(left, h, t) }); err != nil {
			return err
		}
		reduceInto(c.DType, c.Op, dst[rlo:rhi], t)
	}
	own := (r + 1) % n
	lo, hi := segment(c.Count, es, own, n)
	finish(c.DType, c.Op, dst[lo:hi], n)
	for k := range n - 1 {
		si, ri := (r+1-k+n)%n, (r-k+n)%n
		slo, shi := segment(c.Count, es, si, n)
		rlo, rhi := segment(c.Count, es, ri, n)
		h := m.hdr(c, id.at(n-1+k))
		if err := both(func() error { return m.send(right, h, dst[slo:shi]) }, func() error { return m.recv(left, h, dst[rlo:rhi]) }); err != nil {
			return err
		}
	}
	return nil
}

// others runs f for every rank but this one, at once.
func (m *Mesh) others(f func(peer int) error) error {
	errs := make([]error, m.size)
	var wg sync.WaitGroup
	for p := range m.size {
		if p != m.rank {
			wg.Go(func() { errs[p] = f(p) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (m *Mesh) broadcast(c HostCall, id callID) error {
	nb := c.Count * c.DType.Size()
	h := m.hdr(c, id.at(0))
	if m.rank == c.Peer {
		copy(c.RecvBytes[:nb], c.SendBytes[:nb])
		return m.others(func(p int) error { return m.send(p, h, c.RecvBytes[:nb]) })
	}
	return m.recv(c.Peer, h, c.RecvBytes[:nb])
}

// reduce sums at the root in rank order.
func (m *Mesh) reduce(c HostCall, id callID) error {
	nb := c.Count * c.DType.Size()
	h := m.hdr(c, id.at(0))
	if m.rank != c.Peer {
		return m.send(c.Peer, h, c.SendBytes[:nb])
	}
	return m.gatherReduce(c, h, c.SendBytes[:nb], c.RecvBytes[:nb])
}

// gatherReduce sets dst to op over own (this rank's part) and what every
// other rank sends under h, combined in rank order.
func (m *Mesh) gatherReduce(c HostCall, h header, own, dst []byte) error {
	parts := make([][]byte, m.size)
	err := m.others(func(p int) error {
		parts[p] = make([]byte, len(dst))
		return m.recv(p, h, parts[p])
	})
	if err != nil {
		return err
	}
	parts[m.rank] = own
	tmp := make([]byte, len(dst))
	copy(tmp, parts[0])
	for p := 1; p < m.size; p++ {
		reduceInto(c.DType, c.Op, tmp, parts[p])
	}
	finish(c.DType, c.Op, tmp, m.size)
	copy(dst, tmp)
	return nil
}

func (m *Mesh) allGather(c HostCall, id callID) error {
	nb := c.Count * c.DType.Size()
	h := m.hdr(c, id.at(0))
	copy(c.RecvBytes[m.rank*nb:(m.rank+1)*nb], c.SendBytes[:nb])
	mine := c.RecvBytes[m.rank*nb : (m.rank+1)*nb]
	return m.others(func(p int) error {
		return both(func() error { return m.send(p, h, mine) }, func() error { return m.recv(p, h, c.RecvBytes[p*nb:(p+1)*nb]) })
	})
}

func (m *Mesh) reduceScatter(c HostCall, id callID) error {
	nb := c.Count * c.DType.Size()
	h := m.hdr(c, id.at(0))
	errc := make(chan error, 1)
	go func() {
		errc <- m.others(func(p int) error { return m.send(p, h, c.SendBytes[p*nb:(p+1)*nb]) })
	}()
	own := append([]byte(nil), c.SendBytes[m.rank*nb:(m.rank+1)*nb]...)
	err := m.gatherReduce(c, h, own, c.RecvBytes[:nb])
	if e := <-errc; err == nil {
		err = e
	}
	return err
}
