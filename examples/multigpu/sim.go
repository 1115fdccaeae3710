package main

import (
	"errors"

	"github.com/quadrants-go/qd"
)

// sim is the grid split into slabs, each on a Program (doc.go).
type sim struct {
	parts []*part
	cols  int
	work  int
	cur   int // which buffer of each slab holds the current step
}

// part is one slab: its rows [lo, hi) of the grid's interior, in two
// buffers of (hi-lo+2) rows with views of the rows that the halo exchange
// copies.
type part struct {
	step   *qd.Kernel
	s      *qd.Stream
	done   *qd.Event // recorded after each step's kernel on s
	lo, hi int
	buf    [2]*qd.Ndarray[float32]
	// Per buffer: the halo rows, first and last, and the first and last
	// interior rows, which the neighbours copy into their halos.
	top, bottom, first, last [2]*qd.Ndarray[float32]
}

// newSim splits grid ((rows+2) × cols, its boundary rows included) into
// parts slabs of about equal rows, slab i on ps[i % len(ps)].
func newSim(ps []*qd.Program, parts int, grid []float32, cols, work int) (*sim, error) {
	rows := len(grid)/cols - 2
	s := &sim{cols: cols, work: work}
	compiled := map[*qd.Program]*qd.Kernel{} // a module per Program
	for i := range parts {
		p := ps[i%len(ps)]
		k := compiled[p]
		if k == nil {
			mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
			if err != nil {
				return nil, err
			}
			if k, err = mod.Kernel("step"); err != nil {
				return nil, err
			}
			compiled[p] = k
		}
		pt, err := newPart(p, k, grid, cols, i*rows/parts, (i+1)*rows/parts)
		if err != nil {
			return nil, err // the caller closes the Programs, and with them what was made
		}
		s.parts = append(s.parts, pt)
	}
	return s, nil
}

// newPart makes the slab of interior rows [lo, hi) on p, both buffers
// holding the grid's rows lo to hi+1 (its halo and boundary rows
// included).
func newPart(p *qd.Program, k *qd.Kernel, grid []float32, cols, lo, hi int) (*part, error) {
	pt := &part{step: k, lo: lo, hi: hi}
	var err error
	if pt.s, err = p.NewStream(); err != nil {
		return nil, err
	}
	if pt.done, err = p.NewEvent(); err != nil {
		return nil, err
	}
	n := hi - lo
	rows := grid[lo*cols : (hi+2)*cols] // grid row lo is the slab's top halo
	for b := range pt.buf {
		a, err := qd.NewNdarray[float32](p, n+2, cols)
		if err != nil {
			return nil, err
		}
		if err := a.CopyFromHost(rows); err != nil {
			return nil, err
		}
		pt.buf[b] = a
		for _, v := range []struct {
			view   **qd.Ndarray[float32]
			lo, hi int
		}{{&pt.top[b], 0, 1}, {&pt.first[b], 1, 2}, {&pt.last[b], n, n + 1}, {&pt.bottom[b], n + 1, n + 2}} {
			if *v.view, err = a.Rows(v.lo, v.hi); err != nil {
				return nil, err
			}
		}
	}
	return pt, nil
}

// advance enqueues steps time steps on every slab's stream and returns:
// the host never waits.
func (s *sim) advance(steps int) error {
	for range steps {
		c, nx := s.cur, 1-s.cur
		for _, pt := range s.parts {
			if err := pt.step.LaunchOn(pt.s, pt.buf[c], pt.buf[nx], s.work); err != nil {
				return err
			}
			if err := pt.done.Record(pt.s); err != nil {
				return err
			}
		}
		for i, pt := range s.parts {
			if i > 0 { // the top halo is the last row of the slab above
				up := s.parts[i-1]
				if err := pt.s.WaitEvent(up.done); err != nil {
					return err
				}
				if err := pt.top[nx].CopyFromOn(pt.s, up.last[nx]); err != nil {
					return err
				}
			}
			if i < len(s.parts)-1 { // the bottom halo is the first row of the slab below
				down := s.parts[i+1]
				if err := pt.s.WaitEvent(down.done); err != nil {
					return err
				}
				if err := pt.bottom[nx].CopyFromOn(pt.s, down.first[nx]); err != nil {
					return err
				}
			}
		}
		s.cur = nx
	}
	return nil
}

// wait blocks until every slab's stream has done what it was given.
func (s *sim) wait() error {
	var errs []error
	for _, pt := range s.parts {
		errs = append(errs, pt.s.Synchronize())
	}
	return errors.Join(errs...)
}

// result is the grid's interior rows, from every slab (a host read waits
// for the work that writes the arrays).
func (s *sim) result() ([]float32, error) {
	var out []float32
	for _, pt := range s.parts {
		inner, err := pt.buf[s.cur].Rows(1, pt.hi-pt.lo+1)
		if err != nil {
			return nil, err
		}
		v, err := inner.ToSlice()
		if err != nil {
			return nil, err
		}
		out = append(out, v...)
	}
	return out, nil
}
