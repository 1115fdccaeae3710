package qd

import "fmt"

// The objects of a Program (streams, events, arrays, host arrays,
// kernels, graphs): checking them before use, and closing them.
//
// Every object's handle (Stream, Event, ...) holds a core (streamCore,
// eventCore, ...), which the Program's registry and the handle's cleanup
// hold too, so that the handle can become unreachable. Closing has two
// verbs:
//   - close: the object's Close, by the user or by the cleanup of a handle
//     dropped without Close (closeLeaked); it waits for the object's work
//     and frees it, and is idempotent. closeObject runs it unless the
//     Program has already closed.
//   - release: Program.Close's path, once all the Program's work is done.

// object is the core of an object of a Program, as use and check see it.
type object interface{ isClosed() bool }

// useObject takes p's lifetime lock for an operation on o, one of p's
// objects, named what in errors; call exit on p when done. A closed p or
// o gives [ErrClosed].
func (p *Program) useObject(o object, what string) error {
	if err := p.enter(); err != nil {
		return err
	}
	if o.isClosed() {
		p.exit()
		return closedErr(what)
	}
	return nil
}

// checkObject checks o, an object of owner named what, for use with p's
// objects: [ErrForeign] when owner is another Program, [ErrClosed] when o is
// closed. The caller holds p's lifetime lock.
func (p *Program) checkObject(owner *Program, o object, what string) error {
	if owner != p {
		return fmt.Errorf("%w: %s", ErrForeign, what)
	}
	if o.isClosed() {
		return closedErr(what)
	}
	return nil
}

// closable is the core of an object that can be closed.
type closable interface{ close() error }

// closeObject is the Close of an object, and the cleanup of one that became
// unreachable without Close: it closes the object after its work, unless
// [Program.Close] already released everything.
func (p *Program) closeObject(c closable) error {
	p.life.RLock()
	defer p.life.RUnlock()
	if p.closed.Load() {
		return nil
	}
	return c.close()
}

// closeLeaked is the cleanup (runtime.AddCleanup) of an object dropped
// without Close.
func (p *Program) closeLeaked(c closable) { _ = p.closeObject(c) }
