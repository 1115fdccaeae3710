package comm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// The control connections (a member to rank 0) carry frames: a 4-byte
// length, then a type byte and the payload. Payloads are written with
// enc and read with dec: integers as 8 bytes, strings and byte slices
// after their length.

const (
	protoMagic   = 0x71646331 // "qdc1"
	protoVersion = 1
	maxFrame     = 1 << 20
)

type frameType uint8

const (
	frHello     frameType = iota + 1 // member → 0: who it is
	frTable                          // 0 → member: the group
	frRefuse                         // 0 → member: why it may not join
	frHeartbeat                      // either way: still alive
	frBye                            // either way: leaving cleanly
	frAbort                          // either way: the group is broken, and why
	frMeshHello                      // rank → rank on a data connection: who dials
	frLeft                           // 0 → member: a member left cleanly, after so many collectives
)

type enc struct{ b []byte }

func (e *enc) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *enc) int(v int)    { e.u64(uint64(int64(v))) }
func (e *enc) bytes(v []byte) {
	e.u64(uint64(len(v)))
	e.b = append(e.b, v...)
}
func (e *enc) str(v string) { e.bytes([]byte(v)) }

type dec struct {
	b   []byte
	err error
}

func (d *dec) u64() uint64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}
func (d *dec) int() int { return int(int64(d.u64())) }
func (d *dec) bytes() []byte {
	n := d.u64()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := append([]byte(nil), d.b[:n]...)
	d.b = d.b[n:]
	return v
}
func (d *dec) str() string { return string(d.bytes()) }
func (d *dec) fail() {
	if d.err == nil {
		d.err = errors.New("malformed message")
	}
	d.b = nil
}

// link is a connection with a write lock, so that the heartbeat and the
// messages of a member never interleave their frames.
type link struct {
	c  net.Conn
	mu sync.Mutex
}

// send writes one frame, giving up after timeout.
func (l *link) send(t frameType, payload []byte, timeout time.Duration) error {
	if len(payload)+1 > maxFrame {
		return fmt.Errorf("a control message of %d bytes is over the limit", len(payload))
	}
	buf := make([]byte, 5, 5+len(payload))
	binary.LittleEndian.PutUint32(buf, uint32(len(payload)+1))
	buf[4] = byte(t)
	buf = append(buf, payload...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if timeout > 0 {
		l.c.SetWriteDeadline(time.Now().Add(timeout))
	}
	_, err := l.c.Write(buf)
	return err
}

// recv reads one frame; a timeout > 0 bounds the wait.
func recvFrame(c net.Conn, timeout time.Duration) (frameType, []byte, error) {
	if timeout > 0 {
		c.SetReadDeadline(time.Now().Add(timeout))
	} else {
		c.SetReadDeadline(time.Time{})
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n < 1 || n > maxFrame {
		return 0, nil, fmt.Errorf("a control message of %d bytes: not a qd process group", n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(c, buf); err != nil {
		return 0, nil, err
	}
	return frameType(buf[0]), buf[1:], nil
}
