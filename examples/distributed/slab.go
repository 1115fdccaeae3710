package main

import (
	"math"

	"github.com/quadrants-go/qd"
)

// slab is one process's rows [lo, hi) of the grid's interior, in two
// buffers of hi-lo+2 rows, with views of the rows the exchange moves.
type slab struct {
	comm   *qd.Comm
	s      *qd.Stream
	jacobi *qd.Kernel
	lo, hi int
	buf    [2]*qd.Ndarray[float32]
	// Per buffer: the halo rows (top, bottom) and the first and last
	// interior rows, which the neighbours receive.
	top, bottom, first, last [2]*qd.Ndarray[float32]
	res                      *qd.Ndarray[float32]
	cur                      int
}

func newSlab(p *qd.Program, comm *qd.Comm, c config) (*slab, error) {
	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return nil, err
	}
	k, err := mod.Kernel("jacobi")
	if err != nil {
		return nil, err
	}
	r, n := comm.Rank(), comm.Size()
	sl := &slab{comm: comm, s: p.DefaultStream(), jacobi: k, lo: r * c.rows / n, hi: (r + 1) * c.rows / n}
	rows := sl.hi - sl.lo
	g := initial(c.rows, c.cols)
	mine := g[sl.lo*c.cols : (sl.hi+2)*c.cols] // grid row lo is the slab's top halo
	for b := range sl.buf {
		a, err := qd.NewNdarray[float32](p, rows+2, c.cols)
		if err != nil {
			return nil, err
		}
		if err := a.CopyFromHost(mine); err != nil {
			return nil, err
		}
		sl.buf[b] = a
		for _, v := range []struct {
			view   **qd.Ndarray[float32]
			lo, hi int
		}{{&sl.top[b], 0, 1}, {&sl.first[b], 1, 2}, {&sl.last[b], rows, rows + 1}, {&sl.bottom[b], rows + 1, rows + 2}} {
			if *v.view, err = a.Rows(v.lo, v.hi); err != nil {
				return nil, err
			}
		}
	}
	if sl.res, err = qd.NewNdarray[float32](p, 1); err != nil {
		return nil, err
	}
	return sl, nil
}

// exchange sends the current buffer's edge rows to the neighbours and
// receives their edges into the halos, in one group: every process sends
// before it receives, which only a group allows.
func (sl *slab) exchange() error {
	r, n, b := sl.comm.Rank(), sl.comm.Size(), sl.cur
	return sl.comm.Group(func(g *qd.Comm) error {
		if r > 0 {
			if err := g.SendOn(sl.s, sl.first[b], r-1); err != nil {
				return err
			}
			if err := g.RecvOn(sl.s, sl.top[b], r-1); err != nil {
				return err
			}
		}
		if r < n-1 {
			if err := g.SendOn(sl.s, sl.last[b], r+1); err != nil {
				return err
			}
			if err := g.RecvOn(sl.s, sl.bottom[b], r+1); err != nil {
				return err
			}
		}
		return nil
	})
}

// solve runs c.sweeps sweeps, reporting the residual every c.every sweeps
// (the only host waits), and returns the last sweep's.
func (sl *slab) solve(c config, report func(sweep int, res float64)) (float64, error) {
	last := 0.0
	for k := 1; k <= c.sweeps; k++ {
		if err := sl.exchange(); err != nil {
			return 0, err
		}
		if err := sl.res.FillOn(sl.s, 0); err != nil {
			return 0, err
		}
		if err := sl.jacobi.LaunchOn(sl.s, sl.buf[sl.cur], sl.buf[1-sl.cur], sl.res); err != nil {
			return 0, err
		}
		sl.cur = 1 - sl.cur
		if k == c.sweeps || (c.every > 0 && k%c.every == 0) {
			if err := sl.comm.AllReduceOn(sl.s, sl.res, qd.Sum); err != nil {
				return 0, err
			}
			v, err := sl.res.ToSlice() // waits for the reduction
			if err != nil {
				return 0, err
			}
			last = math.Sqrt(float64(v[0]))
			report(k, last)
		}
	}
	return last, sl.s.Synchronize()
}

// interior is the slab's rows of the current buffer.
func (sl *slab) interior() ([]float32, error) {
	in, err := sl.buf[sl.cur].Rows(1, sl.hi-sl.lo+1)
	if err != nil {
		return nil, err
	}
	return in.ToSlice()
}
