package comm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
)

// HostTransport is the CPU backend's Transport: every batch of calls is
// one host task on the stream it is run on, which moves the buffers'
// memory through the Mesh. The stream waits in the task while peers are
// slow, as a GPU stream waits in NCCL's kernel.
type HostTransport struct {
	g     *Group
	mesh  *Mesh
	tasks backend.HostTasker

	inflight atomic.Int64 // batches enqueued or running
}

// NewHostTransport connects g's members through ln (the listener whose
// port the member announced at the rendezvous) and runs their calls on
// tasks' streams.
func NewHostTransport(ctx context.Context, g *Group, ln net.Listener, tasks backend.HostTasker) (*HostTransport, error) {
	m, err := NewMesh(ctx, g, ln)
	if err != nil {
		return nil, err
	}
	return &HostTransport{g: g, mesh: m, tasks: tasks}, nil
}

// hostBytes is the memory of b, a host-addressable buffer.
func hostBytes(b backend.Buffer, name string) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	hp, ok := b.(backend.HostPointer)
	if !ok {
		return nil, fmt.Errorf("%s: the CPU transport needs host memory, not a %T", name, b)
	}
	p := hp.HostPointer()
	if p == nil || b.Bytes() == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(p), b.Bytes()), nil
}

// Run enqueues calls on s as one host task.
func (t *HostTransport) Run(s backend.Stream, calls []Call) error {
	if err := t.Err(); err != nil {
		return err
	}
	hc := make([]HostCall, len(calls))
	for i, c := range calls {
		sb, err := hostBytes(c.Send, c.Name)
		if err != nil {
			return err
		}
		rb, err := hostBytes(c.Recv, c.Name)
		if err != nil {
			return err
		}
		hc[i] = HostCall{Call: c, SendBytes: sb, RecvBytes: rb}
	}
	// Numbered now, in the order the calls are issued; a graph that
	// captured the task runs it once per replay, each a generation.
	seqs := t.mesh.Number(hc)
	var gen atomic.Uint32
	t.inflight.Add(1) // until the first run ends
	err := t.tasks.EnqueueHost(s, func() error {
		g := gen.Add(1) - 1
		if g > 0 {
			t.inflight.Add(1) // a replay
		}
		defer t.inflight.Add(-1)
		if err := t.mesh.ExecNumbered(hc, seqs, g); err != nil {
			return fmt.Errorf("qd: Comm rank %d of %d: %w", t.g.Rank(), t.g.Size(), err)
		}
		return nil
	})
	if err != nil {
		t.inflight.Add(-1)
	}
	return err
}

// InFlight reports whether a batch of calls is enqueued or running.
func (t *HostTransport) InFlight() bool { return t.inflight.Load() > 0 }

// Err is why the group or its connections broke, or nil.
func (t *HostTransport) Err() error {
	if err := t.mesh.Err(); err != nil {
		return err
	}
	return t.g.Cause()
}

// Abort breaks the group: every member's calls in flight fail.
func (t *HostTransport) Abort(cause error) {
	if cause == nil {
		cause = errors.New("aborted")
	}
	t.g.Abort(cause)
	t.mesh.fail(&brokenError{msg: cause.Error()})
}

// Close closes the connections to the peers; it is idempotent.
func (t *HostTransport) Close() error { return t.mesh.Close() }
