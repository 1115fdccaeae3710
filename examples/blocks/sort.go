package main

import (
	"errors"
	"fmt"

	"github.com/quadrants-go/qd"
)

// sorter sorts pairs of uint32 keys and values by key, stably: a radix
// sort of eight passes of 4 bits, each a digitCounts, an exclusive scan of
// the counts and a scatterDigits, all enqueued on one stream. Its buffers
// are made once for n pairs.
type sorter struct {
	p                          *qd.Program
	n                          int
	counts, offsets, sums, top *qd.Ndarray[int32]
	sumsScan                   *qd.Ndarray[int32]
	keys2, vals2               *qd.Ndarray[uint32]
	count, scatter, scan, add  *qd.Kernel
}

func newSorter(p *qd.Program, mod *qd.Module, n int) (*sorter, error) {
	c := 16 * sortBlocks(n)
	runs := (c + scanSize - 1) / scanSize
	if runs > scanSize {
		return nil, fmt.Errorf("sort: %d keys need a scan of %d counts, more than this example's two levels (%d)", n, c, scanSize*scanSize)
	}
	s := &sorter{p: p, n: n}
	var errs []error
	i32 := func(n int) *qd.Ndarray[int32] {
		a, err := qd.NewNdarray[int32](p, n)
		errs = append(errs, err)
		return a
	}
	u32 := func(n int) *qd.Ndarray[uint32] {
		a, err := qd.NewNdarray[uint32](p, n)
		errs = append(errs, err)
		return a
	}
	s.counts, s.offsets, s.sums, s.sumsScan, s.top = i32(c), i32(c), i32(runs), i32(runs), i32(1)
	s.keys2, s.vals2 = u32(n), u32(n)
	for name, k := range map[string]**qd.Kernel{"digitCounts": &s.count, "scatterDigits": &s.scatter, "scanBlocks": &s.scan, "addOffsets": &s.add} {
		var err error
		*k, err = mod.Kernel(name)
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// SortOn enqueues on st the sort of keys with their values (n each).
func (s *sorter) SortOn(st *qd.Stream, keys, vals *qd.Ndarray[uint32]) error {
	if keys.Len() != s.n || vals.Len() != s.n {
		return fmt.Errorf("sort: %d keys and %d values for a sorter of %d", keys.Len(), vals.Len(), s.n)
	}
	in, inV, out, outV := keys, vals, s.keys2, s.vals2
	for shift := uint32(0); shift < 32; shift += 4 {
		steps := []error{
			s.count.LaunchOn(st, in, s.counts, shift),
			s.scan.LaunchOn(st, s.counts, s.offsets, s.sums),
			s.scan.LaunchOn(st, s.sums, s.sumsScan, s.top),
			s.add.LaunchOn(st, s.offsets, s.sumsScan),
			s.scatter.LaunchOn(st, in, inV, out, outV, s.offsets, shift),
		}
		if err := errors.Join(steps...); err != nil {
			return err
		}
		in, inV, out, outV = out, outV, in, inV
	}
	return nil // an even number of passes: the result is back in keys, vals
}

// Close frees the sorter's buffers.
func (s *sorter) Close() error {
	var errs []error
	for _, a := range []*qd.Ndarray[int32]{s.counts, s.offsets, s.sums, s.sumsScan, s.top} {
		if a != nil {
			errs = append(errs, a.Close())
		}
	}
	for _, a := range []*qd.Ndarray[uint32]{s.keys2, s.vals2} {
		if a != nil {
			errs = append(errs, a.Close())
		}
	}
	return errors.Join(errs...)
}
