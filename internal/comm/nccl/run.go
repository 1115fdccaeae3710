package nccl

import (
	"fmt"
	"math"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/comm"
)

// ncclDataType_t and ncclRedOp_t values of nccl.h, indexed by qd's enums;
// noType marks a qd type NCCL lacks (it has no 16-bit integers).
const noType = -1

var dataTypes = [...]int32{
	comm.Int8:    0, // ncclInt8
	comm.Uint8:   1, // ncclUint8
	comm.Int16:   noType,
	comm.Uint16:  noType,
	comm.Int32:   2, // ncclInt32
	comm.Uint32:  3, // ncclUint32
	comm.Int64:   4, // ncclInt64
	comm.Uint64:  5, // ncclUint64
	comm.Float32: 7, // ncclFloat32
	comm.Float64: 8, // ncclFloat64
}

var redOps = [...]int32{
	comm.Sum:  0, // ncclSum
	comm.Prod: 1, // ncclProd
	comm.Max:  2, // ncclMax
	comm.Min:  3, // ncclMin
	comm.Avg:  4, // ncclAvg, NCCL 2.10 and later
}

// avgSince is the first version with ncclAvg.
var avgSince = versionCode(2, 10, 0)

// op is one call of a batch, ready to enqueue: its function and argument
// list. Ops live in the Comm's frame, heap memory reused by every batch,
// so that passing args to SyscallN allocates nothing.
type op struct {
	fn   *gpu.Fn
	n    int
	args [8]uintptr
	name string // the call's name, for messages
}

// Run enqueues calls on s as one NCCL group; see comm.Transport. Every
// call is checked before the first is enqueued.
func (c *Comm) Run(s backend.Stream, calls []comm.Call) error {
	if f := c.failure.Load(); f != nil {
		return f.err
	}
	if len(calls) == 0 {
		return nil
	}
	st, err := c.d.StreamHandle(s)
	if err != nil {
		return fmt.Errorf("%s: %s: %w", c.lib.vendor, callName(&calls[0]), err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.h.Load()
	if h == 0 {
		if f := c.failure.Load(); f != nil {
			return f.err
		}
		return errClosed
	}
	if cap(c.ops) < len(calls) {
		c.ops = make([]op, len(calls))
	}
	c.ops = c.ops[:len(calls)]
	for i := range calls {
		if err := c.prepare(&c.ops[i], &calls[i], h, st); err != nil {
			return err
		}
	}
	c.lib.issue.Lock()
	err = c.d.Do(c.enqueue)
	c.lib.issue.Unlock()
	if err == nil {
		return nil
	}
	if f := c.failure.Load(); f != nil {
		// Aborted under this Run: the abort is what happened.
		return fmt.Errorf("%w (the run in progress then failed: %v)", f.err, err)
	}
	// An enqueue refused for a fault of the communicator: record it now
	// rather than at the watch's next poll. The handle is still ours (mu).
	if perr := c.poll(); perr != nil {
		return perr
	}
	return err
}

// enqueue runs the batch in c.ops on the current call path: a method
// value, so that handing it to Do costs no allocation. A batch of one
// goes without the explicit group, which NCCL makes around every call by
// itself.
func (c *Comm) enqueue() error {
	if len(c.ops) == 1 {
		return c.call(&c.ops[0], false)
	}
	if r := res(purego.SyscallN(c.lib.f.groupStart.Addr)); r != success {
		return c.lib.newError(c.lib.f.groupStart.Name, r, c.h.Load())
	}
	var err error
	for i := range c.ops {
		if err = c.call(&c.ops[i], true); err != nil {
			break
		}
	}
	// The group is ended also after a failed call: NCCL's group depth is
	// per thread, and the thread goes back to the Go scheduler for other
	// goroutines. NCCL ends a group with a failed call by dropping it.
	r := res(purego.SyscallN(c.lib.f.groupEnd.Addr))
	if r == inProgress {
		r = c.pending(c.h.Load())
	}
	if r != success && err == nil {
		err = c.lib.newError(c.lib.f.groupEnd.Name, r, c.h.Load())
	}
	return err
}

// call enqueues one op. Outside a group, a non-blocking communicator's
// ncclInProgress is waited for, so that the op is on the stream when Run
// returns; inside one, the op only joins the group (ncclGroupEnd's
// ncclInProgress is what is waited for then).
func (c *Comm) call(o *op, inGroup bool) error {
	r := res(purego.SyscallN(o.fn.Addr, o.args[:o.n]...))
	if r == inProgress {
		if inGroup {
			return nil
		}
		r = c.pending(c.h.Load())
	}
	if r == success {
		return nil
	}
	return fmt.Errorf("%s: %w", o.name, c.lib.newError(o.fn.Name, r, c.h.Load()))
}

func res(r1, _, _ uintptr) int32 { return int32(uint32(r1)) }

// prepare checks call and lays out its NCCL arguments in o. h is the
// communicator, st the stream's handle.
func (c *Comm) prepare(o *op, call *comm.Call, h, st uintptr) error {
	name := callName(call)
	o.name = name
	dt, err := c.dataType(call, name)
	if err != nil {
		return err
	}
	if call.Count < 0 {
		return fmt.Errorf("%s: %s: count %d", c.lib.vendor, name, call.Count)
	}
	elem := call.DType.Size()
	if call.Count > math.MaxInt/(elem*c.size) {
		return fmt.Errorf("%s: %s: count %d is too large", c.lib.vendor, name, call.Count)
	}
	n := uintptr(call.Count)
	f := &c.lib.f
	switch call.Kind {
	case comm.AllReduce, comm.Reduce, comm.ReduceScatter:
		rop, err := c.redOp(call, name)
		if err != nil {
			return err
		}
		sendElems, recvElems := call.Count, call.Count
		if call.Kind == comm.ReduceScatter {
			sendElems = c.size * call.Count
		}
		root := call.Peer
		if call.Kind == comm.Reduce {
			if err := c.checkRank(name, "root", root); err != nil {
				return err
			}
			if root != c.rank {
				recvElems = 0 // only the root's receive buffer is written
			}
		}
		sp, err := c.address(call.Send, name, "send", sendElems*elem, true)
		if err != nil {
			return err
		}
		rp, err := c.address(call.Recv, name, "receive", recvElems*elem, recvElems > 0)
		if err != nil {
			return err
		}
		switch call.Kind {
		case comm.AllReduce:
			o.fn, o.n = &f.allReduce, 7
			o.args = [8]uintptr{sp, rp, n, dt, rop, h, st}
		case comm.ReduceScatter:
			o.fn, o.n = &f.reduceScatter, 7
			o.args = [8]uintptr{sp, rp, n, dt, rop, h, st}
		default:
			o.fn, o.n = &f.reduce, 8
			o.args = [8]uintptr{sp, rp, n, dt, rop, uintptr(root), h, st}
		}
	case comm.Broadcast:
		if err := c.checkRank(name, "root", call.Peer); err != nil {
			return err
		}
		rp, err := c.address(call.Recv, name, "receive", call.Count*elem, true)
		if err != nil {
			return err
		}
		// The send buffer is read on the root only; elsewhere it may be
		// absent, and the receive buffer stands in (in place).
		sp := rp
		if call.Send != nil || call.Peer == c.rank {
			if sp, err = c.address(call.Send, name, "send", call.Count*elem, true); err != nil {
				return err
			}
		}
		o.fn, o.n = &f.broadcast, 7
		o.args = [8]uintptr{sp, rp, n, dt, uintptr(call.Peer), h, st}
	case comm.AllGather:
		sp, err := c.address(call.Send, name, "send", call.Count*elem, true)
		if err != nil {
			return err
		}
		rp, err := c.address(call.Recv, name, "receive", c.size*call.Count*elem, true)
		if err != nil {
			return err
		}
		o.fn, o.n = &f.allGather, 6
		o.args = [8]uintptr{sp, rp, n, dt, h, st}
	case comm.Send, comm.Recv:
		if err := c.checkRank(name, "peer", call.Peer); err != nil {
			return err
		}
		buf, what, fn := call.Send, "send", &f.send
		if call.Kind == comm.Recv {
			buf, what, fn = call.Recv, "receive", &f.recv
		}
		p, err := c.address(buf, name, what, call.Count*elem, true)
		if err != nil {
			return err
		}
		o.fn, o.n = fn, 6
		o.args = [8]uintptr{p, n, dt, uintptr(call.Peer), h, st}
	default:
		return fmt.Errorf("%s: %s: unknown kind %v", c.lib.vendor, name, call.Kind)
	}
	return nil
}

func callName(call *comm.Call) string {
	if call.Name != "" {
		return call.Name
	}
	return call.Kind.String()
}

// dataType maps the call's element type to NCCL's.
func (c *Comm) dataType(call *comm.Call, name string) (uintptr, error) {
	if int(call.DType) >= len(dataTypes) {
		return 0, fmt.Errorf("%s: %s: unknown element type %v", c.lib.vendor, name, call.DType)
	}
	dt := dataTypes[call.DType]
	if dt == noType {
		return 0, fmt.Errorf("%s: %s: %s has no %s element type (it has 8-, 32- and 64-bit integers and 32- and 64-bit floats): %w",
			c.lib.vendor, name, c.lib.vendor, call.DType, backend.ErrUnsupported)
	}
	return uintptr(dt), nil
}

// redOp maps the call's reduction to NCCL's.
func (c *Comm) redOp(call *comm.Call, name string) (uintptr, error) {
	if int(call.Op) >= len(redOps) {
		return 0, fmt.Errorf("%s: %s: unknown reduction %v", c.lib.vendor, name, call.Op)
	}
	if call.Op == comm.Avg && c.lib.version < avgSince {
		return 0, fmt.Errorf("%s: %s: Avg needs %s 2.10 or newer, this is %s: %w",
			c.lib.vendor, name, c.lib.vendor, versionString(c.lib.version), backend.ErrUnsupported)
	}
	return uintptr(redOps[call.Op]), nil
}

func (c *Comm) checkRank(name, what string, r int) error {
	if r < 0 || r >= c.size {
		return fmt.Errorf("%s: %s: %s %d is not a rank of this communicator of %d", c.lib.vendor, name, what, r, c.size)
	}
	return nil
}

// address is the device address of b, which must hold need bytes. A
// buffer that is not required may be nil (address 0).
func (c *Comm) address(b backend.Buffer, name, what string, need int, required bool) (uintptr, error) {
	if b == nil {
		if required {
			return 0, fmt.Errorf("%s: %s: no %s buffer", c.lib.vendor, name, what)
		}
		return 0, nil
	}
	if have := b.Bytes(); need > have {
		return 0, fmt.Errorf("%s: %s: the %s buffer holds %d bytes, the call needs %d", c.lib.vendor, name, what, have, need)
	}
	p, err := c.d.BufferAddress(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %s buffer: %w", c.lib.vendor, name, what, err)
	}
	return uintptr(p), nil
}

// RawAllReduce enqueues ncclAllReduce(send, recv, count, dt, op, comm,
// stream) on a call path and nothing else: no checks beyond the enum
// mapping, no group, no failure state; only the lock that keeps calls on
// the communicator from running concurrently, which NCCL requires. It is
// the reference Run's host cost is measured against.
func (c *Comm) RawAllReduce(send, recv uint64, count int, dt comm.DType, op comm.Op, stream uintptr) error {
	if int(dt) >= len(dataTypes) || dataTypes[dt] == noType || int(op) >= len(redOps) {
		return fmt.Errorf("%s: RawAllReduce: no NCCL type for %v or reduction for %v: %w", c.lib.vendor, dt, op, backend.ErrUnsupported)
	}
	c.mu.Lock()
	c.raw = [7]uintptr{uintptr(send), uintptr(recv), uintptr(count), uintptr(dataTypes[dt]), uintptr(redOps[op]), c.h.Load(), stream}
	c.lib.issue.Lock()
	err := c.d.Do(c.rawCall)
	c.lib.issue.Unlock()
	c.mu.Unlock()
	return err
}

func (c *Comm) rawCall() error {
	if r := res(purego.SyscallN(c.lib.f.allReduce.Addr, c.raw[:]...)); r != success {
		return c.lib.newError(c.lib.f.allReduce.Name, r, c.raw[5])
	}
	return nil
}
