package main

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/quadrants-go/qd"
)

//go:embed kernels.go
var kernels string

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "blocks:", err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	p, err := qd.Init()
	if err != nil {
		return err
	}
	defer p.Close()
	mod, err := qd.Compile(p, kernels, qd.WithFilename("kernels.go"))
	if err != nil {
		return err
	}
	for _, step := range []struct {
		name string
		run  func(*qd.Program, *qd.Module) error
	}{{"matmul", runMatmul}, {"histogram", runHistogram}, {"scan", runScan}, {"sort", runSort}} {
		if err := step.run(p, mod); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		fmt.Fprintf(w, "%s on %s matches the native run\n", step.name, p.Device())
	}
	return nil
}

// matrix is an n×m matrix of small integers, so that every sum of products
// is exact in float32 and the device must match the native run exactly.
func matrix(n, m, seed int) [][]float32 {
	a := make([][]float32, n)
	for i := range a {
		a[i] = make([]float32, m)
		for j := range a[i] {
			a[i][j] = float32((i*7+j*3+seed)%5 - 2)
		}
	}
	return a
}

func runMatmul(p *qd.Program, mod *qd.Module) error {
	const n, k, m = 100, 70, 90 // not multiples of the tile: edge tiles too
	a, b := matrix(n, k, 1), matrix(k, m, 2)
	want := matrix(n, m, 0)
	matmul(a, b, want)
	c, err := qd.NewNdarray[float32](p, n, m)
	if err != nil {
		return err
	}
	defer c.Close()
	kern, err := mod.Kernel("matmul")
	if err != nil {
		return err
	}
	if err := kern.Launch(a, b, c); err != nil { // Go slices: copied in and out
		return err
	}
	got, err := c.ToSlice()
	if err != nil {
		return err
	}
	for i := range n {
		for j := range m {
			if got[i*m+j] != want[i][j] {
				return fmt.Errorf("c[%d][%d] = %v, want %v", i, j, got[i*m+j], want[i][j])
			}
		}
	}
	return nil
}

func runHistogram(p *qd.Program, mod *qd.Module) error {
	data := make([]uint8, 1<<20)
	for i := range data {
		data[i] = uint8(int(math.Sqrt(float64(i))) * 31 % 256)
	}
	want := make([]uint32, 256)
	histogram(data, want, 8)
	got := make([]uint32, 256)
	kern, err := mod.Kernel("histogram")
	if err != nil {
		return err
	}
	if err := kern.Launch(data, got, 64); err != nil {
		return err
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("bin %d: %d, want %d", i, got[i], want[i])
		}
	}
	return nil
}

func runScan(p *qd.Program, mod *qd.Module) error {
	const n = 3000
	x := make([]int32, n)
	for i := range x {
		x[i] = int32(i%7 - 3)
	}
	blocks := (n + scanSize - 1) / scanSize
	y, sums := make([]int32, n), make([]int32, blocks)
	scan, err := mod.Kernel("scanBlocks")
	if err != nil {
		return err
	}
	add, err := mod.Kernel("addOffsets")
	if err != nil {
		return err
	}
	if err := scan.Launch(x, y, sums); err != nil {
		return err
	}
	offsets := make([]int32, blocks) // few runs: their scan is host work
	for i := 1; i < blocks; i++ {
		offsets[i] = offsets[i-1] + sums[i-1]
	}
	if err := add.Launch(y, offsets); err != nil {
		return err
	}
	var s int32
	for i := range x {
		if y[i] != s {
			return fmt.Errorf("y[%d] = %d, want %d", i, y[i], s)
		}
		s += x[i]
	}
	return nil
}

func runSort(p *qd.Program, mod *qd.Module) error {
	const n = 5000
	keys, vals := make([]uint32, n), make([]uint32, n)
	x := uint32(1)
	for i := range keys {
		x = x*1664525 + 1013904223
		keys[i], vals[i] = x>>(i%3*8), uint32(i) // repeated high digits: stability matters
	}
	s, err := newSorter(p, mod, n)
	if err != nil {
		return err
	}
	defer s.Close()
	k, err := qd.NewNdarray[uint32](p, n)
	if err != nil {
		return err
	}
	defer k.Close()
	v, err := qd.NewNdarray[uint32](p, n)
	if err != nil {
		return err
	}
	defer v.Close()
	if err := errors.Join(k.CopyFromHost(keys), v.CopyFromHost(vals)); err != nil {
		return err
	}
	st, err := p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := s.SortOn(st, k, v); err != nil {
		return err
	}
	gotK, err := k.ToSlice()
	if err != nil {
		return err
	}
	gotV, err := v.ToSlice()
	if err != nil {
		return err
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	for i, j := range idx {
		if gotK[i] != keys[j] || gotV[i] != vals[j] {
			return fmt.Errorf("element %d: (%d, %d), want (%d, %d)", i, gotK[i], gotV[i], keys[j], vals[j])
		}
	}
	// Keys alone, from the same unsorted keys.
	if err := errors.Join(k.CopyFromHost(keys), s.SortKeysOn(st, k)); err != nil {
		return err
	}
	gotK, err = k.ToSlice()
	if err != nil {
		return err
	}
	for i, j := range idx {
		if gotK[i] != keys[j] {
			return fmt.Errorf("keys alone, element %d: %d, want %d", i, gotK[i], keys[j])
		}
	}
	return nil
}
