package comm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Mesh is the CPU transport's connections: one TCP connection between
// every two members, and a reader per connection that files what arrives
// under its tag, so that no member's sends ever wait for the order of
// another's receives (two ranks may Send to each other first, in one
// group or not). A receive posted before its message arrives gets the
// payload read straight into its buffer; one posted after finds it in
// the mailbox.
type Mesh struct {
	g         *Group
	rank      int
	size      int
	opTimeout time.Duration
	peers     []*peerConn // by rank; peers[rank] delivers to itself

	seqMu   sync.Mutex
	collSeq uint64
	sendSeq []uint64 // by peer
	recvSeq []uint64 // by peer

	mu      sync.Mutex
	err     error
	done    chan struct{} // closed when broken
	closing bool
}

// tag names a message: a collective's number and step, or the number of a
// point-to-point message from one rank to another.
type tag struct {
	p2p  bool
	seq  uint64
	gen  uint32
	step uint32
}

// header leads every message on a data connection: the tag, and what the
// sender's call is, which the receiver checks against its own.
type header struct {
	kind  Kind
	dtype DType
	op    Op
	tag   tag
	count uint64 // the call's Count
	bytes uint64 // the payload's

	recvSide bool // a receiver's expectation (not sent): describe says Recv
}

const headerBytes = 40

// maxMessage bounds what a reader allocates for a message nobody waits
// for yet: more than any array a host holds, less than a corrupt length.
const maxMessage = 1 << 40
const meshMagic = 0x716d7368 // "qmsh"

func (h *header) put(b []byte) {
	binary.LittleEndian.PutUint32(b[0:], meshMagic)
	b[4], b[5], b[6] = byte(h.kind), byte(h.dtype), byte(h.op)
	b[7] = 0
	if h.tag.p2p {
		b[7] = 1
	}
	binary.LittleEndian.PutUint64(b[8:], h.tag.seq)
	binary.LittleEndian.PutUint32(b[16:], h.tag.step)
	binary.LittleEndian.PutUint32(b[20:], h.tag.gen)
	binary.LittleEndian.PutUint64(b[24:], h.count)
	binary.LittleEndian.PutUint64(b[32:], h.bytes)
}

func (h *header) get(b []byte) error {
	if binary.LittleEndian.Uint32(b[0:]) != meshMagic {
		return errors.New("a data message without qd's mark: the stream of messages is corrupt")
	}
	h.kind, h.dtype, h.op = Kind(b[4]), DType(b[5]), Op(b[6])
	h.tag = tag{p2p: b[7] == 1, seq: binary.LittleEndian.Uint64(b[8:]), step: binary.LittleEndian.Uint32(b[16:]), gen: binary.LittleEndian.Uint32(b[20:])}
	h.count = binary.LittleEndian.Uint64(b[24:])
	h.bytes = binary.LittleEndian.Uint64(b[32:])
	return nil
}

// describe is the call a header comes from, for mismatch messages.
func (h *header) describe() string {
	switch h.kind {
	case Send:
		if h.recvSide {
			return fmt.Sprintf("a Recv of %d bytes", h.bytes)
		}
		return fmt.Sprintf("a Send of %d bytes", h.bytes)
	case Broadcast, AllGather:
		return fmt.Sprintf("%v of %d bytes", h.kind, h.count)
	}
	return fmt.Sprintf("%v of %d %v (%v)", h.kind, h.count, h.dtype, h.op)
}

type peerConn struct {
	rank int
	c    net.Conn // nil for the member itself
	wmu  sync.Mutex

	mu     sync.Mutex
	mail   map[tag]*mail
	posted map[tag]*post
	gone   error // the connection ended: every wait on it fails so
}

type mail struct {
	h    header
	data []byte
}

type post struct {
	want header
	buf  []byte
	done chan error // one value
}

// Listen opens the data listener a member announces at the rendezvous.
func Listen() (net.Listener, int, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, 0, fmt.Errorf("the CPU transport cannot listen for its peers: %w", err)
	}
	return ln, ln.Addr().(*net.TCPAddr).Port, nil
}

// NewMesh connects this member to every other of g, through ln (the
// listener whose port it announced): it dials the lower ranks and accepts
// the higher ones. It closes ln.
func NewMesh(ctx context.Context, g *Group, ln net.Listener) (*Mesh, error) {
	cfg := g.Config()
	m := &Mesh{
		g: g, rank: cfg.Rank, size: cfg.Size, opTimeout: cfg.OpTimeout,
		peers: make([]*peerConn, cfg.Size), sendSeq: make([]uint64, cfg.Size), recvSeq: make([]uint64, cfg.Size),
		done: make(chan struct{}),
	}
	if m.opTimeout == 0 {
		m.opTimeout = DefaultOpTimeout
	}
	for r := range m.peers {
		m.peers[r] = &peerConn{rank: r, mail: map[tag]*mail{}, posted: map[tag]*post{}}
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(ctx, cfg.JoinTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	// A member that fails between the rendezvous and here breaks the
	// group: stop waiting for it then, and say why.
	watching := make(chan struct{})
	defer close(watching)
	go func() {
		select {
		case <-g.Broken():
			cancel()
		case <-watching:
		}
	}()
	errc := make(chan error, 2)
	go func() { errc <- m.accept(ln, cfg) }()
	go func() { errc <- m.dialLower(ctx, cfg) }()
	err := errors.Join(<-errc, <-errc)
	if err != nil {
		m.closeConns()
		if cause := g.Cause(); cause != nil {
			return nil, fmt.Errorf("rank %d: connecting to the other ranks: %w", m.rank, cause)
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("rank %d: connecting to the other ranks: %w (%v)", m.rank, context.Cause(ctx), err)
		}
		return nil, err
	}
	for _, p := range m.peers {
		if p.c != nil {
			go m.read(p)
		}
	}
	g.OnBreak(m.fail)
	return m, nil
}

func (m *Mesh) accept(ln net.Listener, cfg Config) error {
	for n := m.size - 1 - m.rank; n > 0; {
		c, err := ln.Accept()
		if err != nil {
			return fmt.Errorf("rank %d: accepting the higher ranks' connections: %w", m.rank, err)
		}
		t, p, err := recvFrame(c, 10*time.Second)
		d := dec{b: p}
		tok, r := d.str(), d.int()
		if err != nil || t != frMeshHello || d.err != nil || tok != cfg.Token || r <= m.rank || r >= m.size || m.peers[r].c != nil {
			c.Close() // not one of ours
			continue
		}
		c.SetReadDeadline(time.Time{}) // the hello's: the reader waits as long as it must
		tune(c)
		m.peers[r].c = c
		n--
	}
	return nil
}

func (m *Mesh) dialLower(ctx context.Context, cfg Config) error {
	var d net.Dialer
	for r := range m.rank {
		addr := m.g.Members[r].DataAddr
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("rank %d: connecting to %s at %s: %w", m.rank, m.g.Members[r], addr, err)
		}
		var e enc
		e.str(cfg.Token)
		e.int(m.rank)
		if err := (&link{c: c}).send(frMeshHello, e.b, 10*time.Second); err != nil {
			c.Close()
			return fmt.Errorf("rank %d: connecting to %s: %w", m.rank, m.g.Members[r], err)
		}
		c.SetWriteDeadline(time.Time{})
		tune(c)
		m.peers[r].c = c
	}
	return nil
}

func tune(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		tc.SetReadBuffer(4 << 20)
		tc.SetWriteBuffer(4 << 20)
	}
}

// read files the messages that arrive from p until its connection ends.
func (m *Mesh) read(p *peerConn) {
	var hb [headerBytes]byte
	for {
		var h header
		_, err := io.ReadFull(p.c, hb[:])
		if err == nil {
			err = h.get(hb[:])
		}
		if err == nil {
			err = m.deliver(p, h, p.c)
		}
		if err != nil {
			m.lose(p, err)
			return
		}
	}
}

// deliver reads a payload of h from r into the post waiting for it, or
// into the mailbox.
func (m *Mesh) deliver(p *peerConn, h header, r io.Reader) error {
	p.mu.Lock()
	w := p.posted[h.tag]
	if w != nil {
		delete(p.posted, h.tag)
	}
	p.mu.Unlock()
	if w != nil {
		if bad := mismatch(w.want, h, p.rank); bad != nil {
			if _, err := io.CopyN(io.Discard, r, int64(h.bytes)); err != nil {
				w.done <- bad
				return err
			}
			w.done <- bad
			return nil
		}
		_, err := io.ReadFull(r, w.buf)
		w.done <- err
		return err
	}
	if h.bytes > maxMessage {
		return fmt.Errorf("a message of %d bytes from %s: over the CPU transport's limit (%d): the stream of messages is corrupt", h.bytes, m.g.Members[p.rank], uint64(maxMessage))
	}
	data := make([]byte, h.bytes)
	if _, err := io.ReadFull(r, data); err != nil {
		return err
	}
	p.mu.Lock()
	w = p.posted[h.tag] // posted while the payload was read
	if w == nil {
		p.mail[h.tag] = &mail{h: h, data: data}
		p.mu.Unlock()
		return nil
	}
	delete(p.posted, h.tag)
	p.mu.Unlock()
	w.done <- fill(w, h, data, p.rank)
	return nil
}

func fill(w *post, h header, data []byte, from int) error {
	if bad := mismatch(w.want, h, from); bad != nil {
		return bad
	}
	copy(w.buf, data)
	return nil
}

// mismatch says how a message differs from the call that waits for it.
func mismatch(want, got header, from int) error {
	if want.kind == got.kind && want.dtype == got.dtype && want.op == got.op && want.count == got.count && want.bytes == got.bytes {
		return nil
	}
	return &brokenError{msg: fmt.Sprintf("calls out of step: this rank is in %s, rank %d in %s (every rank must make the same collective calls, of the same sizes, in the same order; Sends and Recvs must pair up)", want.describe(), from, got.describe())}
}

// lose ends p's connection: every wait on it fails. A peer that closed its
// Comm after its last call leaves no wait behind, so only a wait for a
// message that never came sees the error.
func (m *Mesh) lose(p *peerConn, err error) {
	m.mu.Lock()
	closing := m.closing
	m.mu.Unlock()
	why := fmt.Errorf("the connection to %s ended (did its process exit?): %w", m.g.Members[p.rank], err)
	if closing {
		why = errors.New("the Comm is closed")
	} else {
		// A peer that aborts closes its connections while rank 0 tells
		// everyone why: wait a little for the why, which says more
		// than the connection's end.
		select {
		case <-m.g.Broken():
			why = m.g.Cause()
		case <-time.After(250 * time.Millisecond):
		}
	}
	p.mu.Lock()
	if p.gone == nil {
		p.gone = why
	}
	ws := p.posted
	p.posted = map[tag]*post{}
	p.mu.Unlock()
	for _, w := range ws {
		w.done <- why
	}
}

// fail breaks the mesh: every connection closes, every wait fails.
func (m *Mesh) fail(cause error) {
	m.mu.Lock()
	if m.err != nil {
		m.mu.Unlock()
		return
	}
	m.err = cause
	close(m.done)
	m.mu.Unlock()
	m.closeConns()
}

func (m *Mesh) closeConns() {
	for _, p := range m.peers {
		if p.c != nil {
			p.c.Close()
		}
	}
}

// Err is why the mesh broke, or nil.
func (m *Mesh) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Close closes the connections and ends every wait; it is idempotent.
func (m *Mesh) Close() error {
	m.mu.Lock()
	m.closing = true
	m.mu.Unlock()
	m.fail(&brokenError{msg: "the Comm is closed"})
	return nil
}

// send writes a message to rank to.
func (m *Mesh) send(to int, h header, data []byte) error {
	h.bytes = uint64(len(data))
	p := m.peers[to]
	if p.c == nil { // to itself
		return m.deliverSelf(p, h, data)
	}
	var hb [headerBytes]byte
	h.put(hb[:])
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if m.opTimeout > 0 {
		p.c.SetWriteDeadline(time.Now().Add(m.opTimeout))
	}
	bufs := net.Buffers{hb[:], data}
	if _, err := bufs.WriteTo(p.c); err != nil {
		return m.broke(fmt.Errorf("sending to %s: %w", m.g.Members[to], err))
	}
	return nil
}

func (m *Mesh) deliverSelf(p *peerConn, h header, data []byte) error {
	p.mu.Lock()
	w := p.posted[h.tag]
	if w == nil {
		p.mail[h.tag] = &mail{h: h, data: append([]byte(nil), data...)}
		p.mu.Unlock()
		return nil
	}
	delete(p.posted, h.tag)
	p.mu.Unlock()
	w.done <- fill(w, h, data, p.rank)
	return nil
}

// recv waits for the message want names from rank from, into buf.
func (m *Mesh) recv(from int, want header, buf []byte) error {
	want.bytes = uint64(len(buf))
	p := m.peers[from]
	p.mu.Lock()
	if ml := p.mail[want.tag]; ml != nil {
		delete(p.mail, want.tag)
		p.mu.Unlock()
		if bad := mismatch(want, ml.h, from); bad != nil {
			return m.broke(bad)
		}
		copy(buf, ml.data)
		return nil
	}
	if p.gone != nil {
		err := p.gone
		p.mu.Unlock()
		return m.broke(err)
	}
	w := &post{want: want, buf: buf, done: make(chan error, 1)}
	p.posted[want.tag] = w
	p.mu.Unlock()
	var timeout <-chan time.Time
	if m.opTimeout > 0 {
		t := time.NewTimer(m.opTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case err := <-w.done:
		if err != nil {
			return m.broke(err)
		}
		return nil
	case <-m.done:
	case <-timeout:
	}
	// Withdraw the post, unless the reader has taken it: then its buffer
	// is being filled, and done will say how that went.
	p.mu.Lock()
	if p.posted[want.tag] == w {
		delete(p.posted, want.tag)
		p.mu.Unlock()
		if err := m.Err(); err != nil {
			return err
		}
		return m.broke(&brokenError{msg: fmt.Sprintf("%s sent nothing for %v while this rank waited in %s (is it making the same calls? Config.OpTimeout bounds this wait)", m.g.Members[from], m.opTimeout, want.describe())})
	}
	p.mu.Unlock()
	if err := <-w.done; err != nil {
		return m.broke(err)
	}
	return nil
}

// broke breaks the group because of err (this member's view of a failed
// call), and returns the error the call reports.
func (m *Mesh) broke(err error) error {
	if prev := m.Err(); prev != nil {
		return prev
	}
	if !errors.Is(err, ErrBroken) {
		err = &brokenError{msg: err.Error()}
	}
	m.g.Abort(err)
	m.fail(err)
	return err
}
