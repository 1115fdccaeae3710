package benchsuite

import (
	_ "embed"
	"fmt"
	"time"

	"github.com/quadrants-go/qd"
)

// blocksSrc holds the block-level kernels (qd.Blocks) of the rows below.
//
//go:embed testdata/blocks.go
var blocksSrc string

// blockRows: kernels written with block loops, shared memory and the
// block collectives. The reduction and the transpose have bars against
// the device's copy bandwidth; the matrix product, the histogram and the
// scan are held against PyTorch, which runs outside qd bench
// (docs/performance.md records both side by side).
func (s *suite) blockRows() error {
	m, err := qd.Compile(s.p, blocksSrc, qd.WithFilename("blocks.go"))
	if err != nil {
		return err
	}
	st, err := s.p.NewStream()
	if err != nil {
		return err
	}
	defer st.Close()
	for _, row := range []func(*qd.Module, *qd.Stream) error{s.blockSumRow, s.transposeRow, s.sgemmRow, s.histogramRow, s.scanRow} {
		if err := row(m, st); err != nil {
			return err
		}
	}
	return nil
}

func (s *suite) blockSumRow(m *qd.Module, st *qd.Stream) error {
	n := s.memSize()
	k, err := m.Kernel("blockSum")
	if err != nil {
		return err
	}
	x, err := qd.NewNdarray[float32](s.p, n)
	if err != nil {
		return err
	}
	defer x.Close()
	out, err := qd.NewNdarray[float32](s.p, 1)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := x.FillOn(st, 1); err != nil {
		return err
	}
	nb := s.pick(8, 16, 1024)
	d, err := s.timeKernel(st, s.pick(3, 5, 20), func() error { return k.LaunchOn(st, x, out, nb) })
	if err != nil {
		return err
	}
	if err := out.CopyFromHost([]float32{0}); err != nil {
		return err
	}
	if err := k.LaunchOn(st, x, out, nb); err != nil {
		return err
	}
	got, err := out.ToSlice()
	if err != nil {
		return err
	}
	if got[0] != float32(n) { // partial sums of ones are exact below 2^24
		return fmt.Errorf("block sum of %d ones: %v", n, got[0])
	}
	ref, refName, err := s.copyBandwidth(4 * n)
	if err != nil {
		return err
	}
	floor := time.Duration(4 * float64(n) / ref * 1e9)
	r := Row{Name: fmt.Sprintf("block reduce (sum of 2^%d float32, qd.BlockSum)", log2(n)), Value: ms(d), Unit: "ms",
		RefName: "byte floor at " + refName, RefValue: ms(floor), Ratio: float64(floor) / float64(d), Note: "ratio = floor/time"}
	s.gpuBar(&r, 0.9)
	s.add(r)
	return nil
}

// gpuBar sets a ≥ bar on a GPU; on the CPU the row is for information.
func (s *suite) gpuBar(r *Row, limit float64) {
	if s.gpu {
		barGE(r, limit)
	} else {
		r.Status = Info
	}
}

func (s *suite) transposeRow(m *qd.Module, st *qd.Stream) error {
	side := s.pick(256, 2048, 8192)
	k, err := m.Kernel("transpose")
	if err != nil {
		return err
	}
	host := make([]float32, side*side)
	for i := range host {
		host[i] = float32(i % 65521)
	}
	in, err := qd.NewNdarray[float32](s.p, side, side)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := qd.NewNdarray[float32](s.p, side, side)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := in.CopyFromHost(host); err != nil {
		return err
	}
	d, err := s.timeKernel(st, s.pick(3, 5, 20), func() error { return k.LaunchOn(st, in, out) })
	if err != nil {
		return err
	}
	got, err := out.ToSlice()
	if err != nil {
		return err
	}
	for _, p := range [][2]int{{0, 0}, {1, 2}, {side - 1, 3}, {side / 2, side - 1}} {
		if i, j := p[0], p[1]; got[j*side+i] != host[i*side+j] {
			return fmt.Errorf("transpose: out[%d][%d] = %v, want %v", j, i, got[j*side+i], host[i*side+j])
		}
	}
	ref, refName, err := s.copyBandwidth(4 * s.memSize())
	if err != nil {
		return err
	}
	bytes := 8 * float64(side) * float64(side)
	r := Row{Name: fmt.Sprintf("transpose %d² float32 (64×65 shared tile)", side), Value: bytes / d.Seconds() / 1e9, Unit: "GB/s",
		RefName: refName, RefValue: ref / 1e9, Ratio: bytes / d.Seconds() / ref, Note: "bytes read + written per second"}
	s.gpuBar(&r, 0.8)
	s.add(r)
	return nil
}

func (s *suite) sgemmRow(m *qd.Module, st *qd.Stream) error {
	if err := s.sgemmOn(m, st, ""); err != nil {
		return err
	}
	// With fast math, as nvcc and cuBLAS compute: a·b+c contracted to one
	// fused multiply-add (exact float semantics keep the two roundings).
	q, err := qd.Init(qd.WithArch(s.p.Arch()), qd.WithFastMath())
	if err != nil {
		return err
	}
	defer q.Close()
	fs := *s
	fs.p = q
	fm, err := qd.Compile(q, blocksSrc, qd.WithFilename("blocks.go"))
	if err != nil {
		return err
	}
	fst, err := q.NewStream()
	if err != nil {
		return err
	}
	defer fst.Close()
	if err := fs.sgemmOn(fm, fst, ", fast math"); err != nil {
		return err
	}
	s.rows = fs.rows
	return nil
}

// sgemmOn times the sgemm kernel of m on st; how names the row's variant.
func (s *suite) sgemmOn(m *qd.Module, st *qd.Stream, how string) error {
	p := s.p
	n := s.pick(128, 256, 1024)
	k, err := m.Kernel("sgemm")
	if err != nil {
		return err
	}
	ha, hb := make([]float32, n*n), make([]float32, n*n)
	for i := range ha {
		ha[i], hb[i] = float32(i%7-3), float32(i%5-2) // small integers: exact sums
	}
	a, err := qd.NewNdarray[float32](p, n, n)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := qd.NewNdarray[float32](p, n, n)
	if err != nil {
		return err
	}
	defer b.Close()
	c, err := qd.NewNdarray[float32](p, n, n)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := a.CopyFromHost(ha); err != nil {
		return err
	}
	if err := b.CopyFromHost(hb); err != nil {
		return err
	}
	d, err := s.timeKernel(st, s.pick(3, 5, 50), func() error { return k.LaunchOn(st, a, b, c) })
	if err != nil {
		return err
	}
	got, err := c.ToSlice()
	if err != nil {
		return err
	}
	for _, p := range [][2]int{{0, 0}, {3, 7}, {n - 1, n - 1}, {n / 2, 5}} {
		var want float32
		for kk := range n {
			want += ha[p[0]*n+kk] * hb[kk*n+p[1]]
		}
		if g := got[p[0]*n+p[1]]; g != want {
			return fmt.Errorf("sgemm: c[%d][%d] = %v, want %v", p[0], p[1], g, want)
		}
	}
	flops := 2 * float64(n) * float64(n) * float64(n)
	s.add(Row{Name: fmt.Sprintf("tiled SGEMM %d² float32 (64×64 tiles, 4×4 per thread%s)", n, how), Value: flops / d.Seconds() / 1e12, Unit: "TFLOP/s",
		Status: Info, Note: fmt.Sprintf("%.1f µs; against torch.matmul (TF32 off) in docs/performance.md", us(d))})
	return nil
}

func (s *suite) histogramRow(m *qd.Module, st *qd.Stream) error {
	words := s.pick(1<<16, 1<<20, 1<<24) // 64 MiB of bytes on the GPU
	k, err := m.Kernel("histogram256")
	if err != nil {
		return err
	}
	host := make([]uint32, words)
	want := make([]uint32, 256)
	x := uint32(12345)
	for i := range host {
		x = x*1664525 + 1013904223
		host[i] = x
		for sh := 0; sh < 32; sh += 8 {
			want[x>>sh&255]++
		}
	}
	data, err := qd.NewNdarray[uint32](s.p, words)
	if err != nil {
		return err
	}
	defer data.Close()
	hist, err := qd.NewNdarray[uint32](s.p, 256)
	if err != nil {
		return err
	}
	defer hist.Close()
	if err := data.CopyFromHost(host); err != nil {
		return err
	}
	nb := s.pick(8, 16, 1024)
	d, err := s.timeKernel(st, s.pick(3, 5, 20), func() error { return k.LaunchOn(st, data, hist, nb) })
	if err != nil {
		return err
	}
	if err := hist.FillOn(st, 0); err != nil {
		return err
	}
	if err := k.LaunchOn(st, data, hist, nb); err != nil {
		return err
	}
	got, err := hist.ToSlice()
	if err != nil {
		return err
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("histogram: bin %d = %d, want %d", i, got[i], want[i])
		}
	}
	bytes := 4 * float64(words)
	s.add(Row{Name: fmt.Sprintf("256-bin histogram of %d MiB of bytes (shared bins)", 4*words>>20), Value: ms(d), Unit: "ms",
		Status: Info, Note: fmt.Sprintf("%.0f GB/s; against torch.bincount in docs/performance.md", bytes/d.Seconds()/1e9)})
	return nil
}

func (s *suite) scanRow(m *qd.Module, st *qd.Stream) error {
	n := s.pick(1<<16, 1<<20, 1<<26)
	totals, err := m.Kernel("scanTotals")
	if err != nil {
		return err
	}
	runs, err := m.Kernel("scanRuns")
	if err != nil {
		return err
	}
	host := make([]int32, n)
	for i := range host {
		host[i] = int32(i%7 - 3)
	}
	x, err := qd.NewNdarray[int32](s.p, n)
	if err != nil {
		return err
	}
	defer x.Close()
	y, err := qd.NewNdarray[int32](s.p, n)
	if err != nil {
		return err
	}
	defer y.Close()
	if err := x.CopyFromHost(host); err != nil {
		return err
	}
	// Two levels of runs of 2048 (scanRun) above x, the last scanned by
	// one block: n up to 2^33.
	n1 := (n + 2047) / 2048
	n2 := (n1 + 2047) / 2048
	var arrays []*qd.Ndarray[int32]
	mk := func(n int) *qd.Ndarray[int32] {
		a, e := qd.NewNdarray[int32](s.p, n)
		if e != nil && err == nil {
			err = e
		}
		arrays = append(arrays, a)
		return a
	}
	sums1, sums2, off1, off2, zero := mk(n1), mk(n2), mk(n1), mk(n2), mk(1)
	defer func() {
		for _, a := range arrays {
			if a != nil {
				a.Close()
			}
		}
	}()
	if err != nil {
		return err
	}
	scan := func() error {
		for _, step := range []func() error{
			func() error { return totals.LaunchOn(st, x, sums1) },
			func() error { return totals.LaunchOn(st, sums1, sums2) },
			func() error { return runs.LaunchOn(st, sums2, off2, zero) },
			func() error { return runs.LaunchOn(st, sums1, off1, off2) },
			func() error { return runs.LaunchOn(st, x, y, off1) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	}
	d, err := s.timeKernel(st, s.pick(3, 5, 20), scan)
	if err != nil {
		return err
	}
	got, err := y.ToSlice()
	if err != nil {
		return err
	}
	var sum int32
	for i := range host {
		if got[i] != sum {
			return fmt.Errorf("scan: y[%d] = %d, want %d", i, got[i], sum)
		}
		sum += host[i]
	}
	s.add(Row{Name: fmt.Sprintf("exclusive scan of 2^%d int32 (qd.BlockSum, qd.BlockExclusiveSum)", log2(n)), Value: ms(d), Unit: "ms",
		Status: Info, Note: "5 launches (two passes over the input, runs of 2048); against torch.cumsum in docs/performance.md"})
	return nil
}
