package qd

import (
	"context"
	"errors"
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/comm"
	"github.com/quadrants-go/qd/internal/comm/nccl"
)

// joinGPU joins the group with NCCL (RCCL on AMD): rank 0's unique id
// travels with the rendezvous, then every member initialises its
// communicator on the Program's device.
func (c *commCore) joinGPU(ctx context.Context) error {
	d, ok := c.p.dev.(*gpu.Device)
	if !ok {
		return fmt.Errorf("collectives on a %T: %w", c.p.dev, ErrUnsupported)
	}
	lib, err := nccl.Load(c.p.arch.String())
	if err != nil {
		return err
	}
	spec := comm.JoinSpec{Transport: "nccl"}
	if c.cfg.Rank == 0 {
		spec.Blob = func() ([]byte, error) {
			id, err := lib.NewUniqueID()
			return id[:], err
		}
	}
	g, err := comm.Join(ctx, c.cfg, spec)
	if err != nil {
		return err
	}
	var id [128]byte
	if len(g.Blob) != len(id) {
		g.Close()
		return fmt.Errorf("rank 0 sent an NCCL id of %d bytes, not %d", len(g.Blob), len(id))
	}
	copy(id[:], g.Blob)
	// A member that dies while the others initialise leaves them in
	// NCCL's init; the group's watch breaks it, and the abort below ends
	// the init once it returns.
	nc, err := lib.NewComm(d, c.cfg.Size, c.cfg.Rank, id)
	if err != nil {
		g.Abort(err)
		g.Close()
		return err
	}
	t := &ncclTransport{nc: nc, g: g}
	g.OnBreak(func(cause error) { nc.Abort(cause) })
	c.g, c.t, c.async = g, t, true
	return nil
}

// ncclTransport is NCCL's communicator with the group's watch: a member
// that dies breaks the group, which aborts the communicator so that
// kernels waiting for the dead peer end.
type ncclTransport struct {
	nc *nccl.Comm
	g  *comm.Group
}

func (t *ncclTransport) Run(s backend.Stream, calls []comm.Call) error {
	if err := t.g.Cause(); err != nil {
		return err
	}
	return t.nc.Run(s, calls)
}

func (t *ncclTransport) Err() error {
	if err := t.g.Cause(); err != nil {
		return err
	}
	return t.nc.Err()
}

// Abort breaks the group (every member learns why) and the communicator.
func (t *ncclTransport) Abort(cause error) {
	if cause == nil {
		cause = errors.New("aborted")
	}
	t.g.Abort(cause)
	t.nc.Abort(cause)
}

func (t *ncclTransport) Close() error { return t.nc.Close() }
