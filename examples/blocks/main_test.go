package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/quadrants-go/qd"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "sort on") {
		t.Errorf("output: %s", out.String())
	}
}

// BenchmarkSort sorts 2^20 key-value pairs per iteration (the same keys
// each time), on the device qd.Init picks: torch.sort of 2^20 int32 keys
// is the reference (docs/performance.md).
func BenchmarkSort(b *testing.B) { benchSort(b, false) }

// BenchmarkSortKeys sorts 2^20 keys alone per iteration (SortKeysOn).
func BenchmarkSortKeys(b *testing.B) { benchSort(b, true) }

func benchSort(b *testing.B, keysOnly bool) {
	p, err := qd.Init()
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		b.Fatal(err)
	}
	const n = 1 << 20
	s, err := newSorter(p, mod, n)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	keys := make([]uint32, n)
	x := uint32(7)
	for i := range keys {
		x = x*1664525 + 1013904223
		keys[i] = x
	}
	src, _ := qd.NewNdarray[uint32](p, n)
	k, _ := qd.NewNdarray[uint32](p, n)
	v, _ := qd.NewNdarray[uint32](p, n)
	defer src.Close()
	defer k.Close()
	defer v.Close()
	if err := src.CopyFromHost(keys); err != nil {
		b.Fatal(err)
	}
	st, err := p.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	sort := func() error { return s.SortOn(st, k, v) }
	if keysOnly {
		sort = func() error { return s.SortKeysOn(st, k) }
	}
	for b.Loop() {
		// The same unsorted keys each time (a device copy: 4 MB, a few µs).
		if err := errors.Join(k.CopyFromOn(st, src), sort(), st.Synchronize()); err != nil {
			b.Fatal(err)
		}
	}
}
