package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/quadrants-go/qd"
)

// sorter sorts pairs of uint32 keys and values by key, stably: a radix
// sort of eight passes of 4 bits, each a digitCounts, a scanCounts and a
// scatterDigits, all enqueued on one stream. Its buffers are made once
// for n pairs.
type sorter struct {
	p                    *qd.Program
	n                    int
	counts, offsets      *qd.Ndarray[int32]
	keys2, vals2         *qd.Ndarray[uint32]
	count, scatter, scan *qd.Kernel
	scatterKeys          *qd.Kernel
}

func newSorter(p *qd.Program, mod *qd.Module, n int) (*sorter, error) {
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("sort: %d keys, more than the int32 offsets hold", n)
	}
	c := 16 * sortTiles(n)
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
	s.counts, s.offsets = i32(c), i32(c)
	s.keys2, s.vals2 = u32(n), u32(n)
	for name, k := range map[string]**qd.Kernel{"digitCounts": &s.count, "scatterDigits": &s.scatter, "scanCounts": &s.scan, "scatterKeys": &s.scatterKeys} {
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
			s.scan.LaunchOn(st, s.counts, s.offsets),
			s.scatter.LaunchOn(st, in, inV, out, outV, s.offsets, shift),
		}
		if err := errors.Join(steps...); err != nil {
			return err
		}
		in, inV, out, outV = out, outV, in, inV
	}
	return nil // an even number of passes: the result is back in keys, vals
}

// SortKeysOn enqueues on st the sort of keys alone (n of them): the same
// passes as SortOn with a scatter that moves no values and writes each
// digit's run of a tile in consecutive places.
func (s *sorter) SortKeysOn(st *qd.Stream, keys *qd.Ndarray[uint32]) error {
	if keys.Len() != s.n {
		return fmt.Errorf("sort: %d keys for a sorter of %d", keys.Len(), s.n)
	}
	in, out := keys, s.keys2
	for shift := uint32(0); shift < 32; shift += 4 {
		steps := []error{
			s.count.LaunchOn(st, in, s.counts, shift),
			s.scan.LaunchOn(st, s.counts, s.offsets),
			s.scatterKeys.LaunchOn(st, in, out, s.counts, s.offsets, shift),
		}
		if err := errors.Join(steps...); err != nil {
			return err
		}
		in, out = out, in
	}
	return nil // an even number of passes: the result is back in keys
}

// Close frees the sorter's buffers.
func (s *sorter) Close() error {
	var errs []error
	for _, a := range []*qd.Ndarray[int32]{s.counts, s.offsets} {
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
