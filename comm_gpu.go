package qd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

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
		err := fmt.Errorf("rank 0 sent an NCCL id of %d bytes, not %d", len(g.Blob), len(id))
		g.Abort(err)
		g.Close()
		return err
	}
	copy(id[:], g.Blob)
	// NCCL's init waits for every member. One that fails or dies
	// meanwhile breaks the group, and this member returns then with the
	// group's cause; its init goes on in the background until NCCL gives
	// up, and its communicator, if it ever comes, is aborted.
	type made struct {
		nc  *nccl.Comm
		err error
	}
	done := make(chan made, 1)
	go func() {
		nc, err := lib.NewComm(d, c.cfg.Size, c.cfg.Rank, id)
		done <- made{nc, err}
	}()
	var nc *nccl.Comm
	select {
	case r := <-done:
		nc, err = r.nc, r.err
	case <-g.Broken():
		err = g.Cause()
	case <-ctx.Done():
		err = fmt.Errorf("NCCL's init of the communicator: %w", context.Cause(ctx))
	}
	if nc == nil {
		if err == nil {
			err = errors.New("NCCL's init returned no communicator")
		}
		go func() {
			if r := <-done; r.nc != nil {
				r.nc.Abort(err)
				r.nc.Close()
			}
		}()
		g.Abort(err)
		g.Close()
		return err
	}
	t := &ncclTransport{nc: nc, g: g, stop: make(chan struct{})}
	g.OnBreak(func(cause error) { nc.Abort(cause) })
	go t.watch()
	c.g, c.t, c.async = g, t, true
	return nil
}

// ncclTransport is NCCL's communicator with the group's watch: a member
// that dies breaks the group, which aborts the communicator so that
// kernels waiting for the dead peer end.
type ncclTransport struct {
	nc   *nccl.Comm
	g    *comm.Group
	stop chan struct{}
	once sync.Once
}

// watch breaks the group when the communicator has failed (its own
// watch polls NCCL's asynchronous errors), so that the other members
// learn of it without waiting for this one to synchronize.
func (t *ncclTransport) watch() {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-t.stop:
			return
		case <-t.g.Broken():
			return
		case <-tick.C:
			if err := t.nc.Failure(); err != nil {
				t.g.Abort(err)
				return
			}
		}
	}
}

func (t *ncclTransport) Run(s backend.Stream, calls []comm.Call) error {
	if err := t.g.Cause(); err != nil {
		return err
	}
	return t.nc.Run(s, calls)
}

// Err is the group's cause, or NCCL's failure, which then breaks the
// group: every member learns of it, and this one's goodbye is not taken
// for a clean one.
func (t *ncclTransport) Err() error {
	if err := t.g.Cause(); err != nil {
		return err
	}
	if err := t.nc.Err(); err != nil {
		t.g.Abort(err)
		return err
	}
	return nil
}

// Abort breaks the group (every member learns why) and the communicator.
func (t *ncclTransport) Abort(cause error) {
	if cause == nil {
		cause = errors.New("aborted")
	}
	t.g.Abort(cause)
	t.nc.Abort(cause)
}

func (t *ncclTransport) Close() error {
	t.once.Do(func() { close(t.stop) })
	return t.nc.Close()
}
