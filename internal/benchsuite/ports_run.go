package benchsuite

import (
	"fmt"
	"time"

	"github.com/quadrants-go/qd"
)

// The ports' runs: each makes its inputs (the generators of
// ports_ref.go, which the drivers share), times the original's launch
// sequence through portTime, runs it once more from fresh inputs where a
// run changes them, and checks the result against the plain-Go reference.

func (e *portEnv) matrixMul(hA, wA, wB int) (d time.Duration, err error) {
	ks, err := e.kernels("matrixMul")
	if err != nil {
		return 0, err
	}
	ha, hb := matrixMulInputs(hA, wA, wB)
	var open []func() error
	defer func() { closeAll(open) }()
	a := nd(e, &err, &open, ha, hA, wA)
	b := nd(e, &err, &open, hb, wA, wB)
	c := nd[float32](e, &err, &open, nil, hA, wB)
	if err != nil {
		return 0, err
	}
	if d, err = e.portTime(func() error { return ks[0].LaunchOn(e.st, c, a, b) }); err != nil {
		return 0, err
	}
	got, err := c.ToSlice()
	if err != nil {
		return 0, err
	}
	return d, checkMatrixMul(got, ha, hb, hA, wA, wB)
}

func (e *portEnv) transpose(kernel string, n int) (d time.Duration, err error) {
	ks, err := e.kernels(kernel)
	if err != nil {
		return 0, err
	}
	host := make([]float32, n*n)
	for i := range host {
		host[i] = float32(i) // as the sample
	}
	var open []func() error
	defer func() { closeAll(open) }()
	in := nd(e, &err, &open, host, n, n)
	out := nd[float32](e, &err, &open, nil, n, n)
	if err != nil {
		return 0, err
	}
	if d, err = e.portTime(func() error { return ks[0].LaunchOn(e.st, out, in) }); err != nil {
		return 0, err
	}
	got, err := out.ToSlice()
	if err != nil {
		return 0, err
	}
	for i := range n {
		for j := range n {
			want := host[i*n+j] // copy
			if kernel != "transposeCopy" {
				want = host[j*n+i]
			}
			if g := got[i*n+j]; g != want {
				return 0, fmt.Errorf("%s %d: out[%d][%d] = %v, want %v", kernel, n, i, j, g, want)
			}
		}
	}
	return d, nil
}

func (e *portEnv) histogram(bytes int) (d time.Duration, err error) {
	ks, err := e.kernels("histogram256Kernel", "mergeHistogram256Kernel")
	if err != nil {
		return 0, err
	}
	host := histogramInput(bytes / 4)
	var open []func() error
	defer func() { closeAll(open) }()
	data := nd(e, &err, &open, host, len(host))
	partial := nd[uint32](e, &err, &open, nil, 240, 256)
	hist := nd[uint32](e, &err, &open, nil, 256)
	if err != nil {
		return 0, err
	}
	d, err = e.portTime(func() error {
		if err := ks[0].LaunchOn(e.st, partial, data); err != nil {
			return err
		}
		return ks[1].LaunchOn(e.st, hist, partial)
	})
	if err != nil {
		return 0, err
	}
	got, err := hist.ToSlice()
	if err != nil {
		return 0, err
	}
	want := make([]uint32, 256)
	for _, w := range host {
		for sh := 0; sh < 32; sh += 8 {
			want[w>>sh&255]++
		}
	}
	for i := range want {
		if got[i] != want[i] {
			return 0, fmt.Errorf("histogram256: bin %d = %d, want %d", i, got[i], want[i])
		}
	}
	return d, nil
}

// scan runs the sample's scanExclusiveShort (arrayLength ≤ 1024: one
// kernel) or scanExclusiveLarge (three) over n elements, n/arrayLength
// arrays.
func (e *portEnv) scan(n, arrayLength int) (d time.Duration, err error) {
	ks, err := e.kernels("scanExclusiveShared", "scanExclusiveShared2", "uniformUpdate")
	if err != nil {
		return 0, err
	}
	host := scanInput(n)
	var open []func() error
	defer func() { closeAll(open) }()
	src := nd(e, &err, &open, host, n)
	dst := nd[uint32](e, &err, &open, nil, n)
	buf := nd[uint32](e, &err, &open, nil, n/1024)
	if err != nil {
		return 0, err
	}
	run := func() error { return ks[0].LaunchOn(e.st, dst, src, uint32(arrayLength)) }
	if arrayLength > 1024 {
		run = func() error {
			if err := ks[0].LaunchOn(e.st, dst, src, uint32(1024)); err != nil {
				return err
			}
			if err := ks[1].LaunchOn(e.st, buf, dst, src, uint32(arrayLength/1024)); err != nil {
				return err
			}
			return ks[2].LaunchOn(e.st, dst, buf)
		}
	}
	if d, err = e.portTime(run); err != nil {
		return 0, err
	}
	got, err := dst.ToSlice()
	if err != nil {
		return 0, err
	}
	var sum uint32
	for i, x := range host {
		if i%arrayLength == 0 {
			sum = 0
		}
		if got[i] != sum {
			return 0, fmt.Errorf("scan %d/%d: dst[%d] = %d, want %d", n, arrayLength, i, got[i], sum)
		}
		sum += x
	}
	return d, nil
}

// bitonic runs the sample's bitonicSort of one array of n keys and values
// (n a power of two, at least 2048) in the sample's direction 0
// (descending).
func (e *portEnv) bitonic(n int) (d time.Duration, err error) {
	ks, err := e.kernels("bitonicSortShared1", "bitonicMergeGlobal", "bitonicMergeShared")
	if err != nil {
		return 0, err
	}
	hk, hv := sortInput(n)
	var open []func() error
	defer func() { closeAll(open) }()
	srcKey := nd(e, &err, &open, hk, n)
	srcVal := nd(e, &err, &open, hv, n)
	dstKey := nd[uint32](e, &err, &open, nil, n)
	dstVal := nd[uint32](e, &err, &open, nil, n)
	if err != nil {
		return 0, err
	}
	const dir = uint32(0)
	run := func() error {
		if err := ks[0].LaunchOn(e.st, dstKey, dstVal, srcKey, srcVal); err != nil {
			return err
		}
		for size := 2 * 1024; size <= n; size <<= 1 {
			for stride := size / 2; stride > 0; stride >>= 1 {
				if stride >= 1024 {
					if err := ks[1].LaunchOn(e.st, dstKey, dstVal, uint32(n), uint32(size), uint32(stride), dir); err != nil {
						return err
					}
					continue
				}
				if err := ks[2].LaunchOn(e.st, dstKey, dstVal, uint32(n), uint32(size), dir); err != nil {
					return err
				}
				break
			}
		}
		return nil
	}
	if d, err = e.portTime(run); err != nil {
		return 0, err
	}
	gk, err := dstKey.ToSlice()
	if err != nil {
		return 0, err
	}
	gv, err := dstVal.ToSlice()
	if err != nil {
		return 0, err
	}
	return d, checkSorted(gk, gv, hk)
}

func (e *portEnv) hotspot(n, pyramid, steps int) (d time.Duration, err error) {
	ks, err := e.kernels("calculateTemp")
	if err != nil {
		return 0, err
	}
	temp, power := hotspotInputs(n)
	hp := newHotspotParams(n)
	var open []func() error
	defer func() { closeAll(open) }()
	pw := nd(e, &err, &open, power, n, n)
	t := [2]*qd.Ndarray[float32]{nd(e, &err, &open, temp, n, n), nd[float32](e, &err, &open, nil, n, n)}
	if err != nil {
		return 0, err
	}
	border := pyramid // EXPAND_RATE/2 per step
	small := hotspotBlock - 2*pyramid
	blocks := (n + small - 1) / small
	dst := 0
	run := func() error { // Rodinia's compute_tran_temp
		src := 1
		dst = 0
		for s := 0; s < steps; s += pyramid {
			src, dst = dst, src
			if err := ks[0].LaunchOn(e.st, min(pyramid, steps-s), pw, t[src], t[dst], border, border,
				hp.capacitance, hp.rx, hp.ry, hp.rz, hp.step, blocks, blocks); err != nil {
				return err
			}
		}
		return nil
	}
	if d, err = e.portTime(run); err != nil {
		return 0, err
	}
	if err := t[0].CopyFromHost(temp); err != nil { // the runs moved the state on
		return 0, err
	}
	if err := run(); err != nil {
		return 0, err
	}
	got, err := t[dst].ToSlice()
	if err != nil {
		return 0, err
	}
	return d, checkHotspot(got, hotspotRef(temp, power, n, steps, hp), n)
}

// hotspotBlock is the kernels' BLOCK_SIZE for hotspot.
const hotspotBlock = 16

func (e *portEnv) nw(n int, penalty int32) (d time.Duration, err error) {
	ks, err := e.kernels("needleCudaShared1", "needleCudaShared2")
	if err != nil {
		return 0, err
	}
	ref, matrix := nwInputs(n, penalty)
	cols := n + 1
	var open []func() error
	defer func() { closeAll(open) }()
	dref := nd(e, &err, &open, ref, len(ref))
	dm := nd(e, &err, &open, matrix, len(matrix))
	if err != nil {
		return 0, err
	}
	width := n / 16
	run := func() error { // every run rewrites the same cells from the same borders
		for i := 1; i <= width; i++ {
			if err := ks[0].LaunchOn(e.st, dref, dm, cols, penalty, i, width); err != nil {
				return err
			}
		}
		for i := width - 1; i >= 1; i-- {
			if err := ks[1].LaunchOn(e.st, dref, dm, cols, penalty, i, width); err != nil {
				return err
			}
		}
		return nil
	}
	if d, err = e.portTime(run); err != nil {
		return 0, err
	}
	got, err := dm.ToSlice()
	if err != nil {
		return 0, err
	}
	want := nwRef(ref, matrix, n, penalty)
	for i := range want {
		if got[i] != want[i] {
			return 0, fmt.Errorf("nw %d: score[%d][%d] = %d, want %d", n, i/cols, i%cols, got[i], want[i])
		}
	}
	return d, nil
}
