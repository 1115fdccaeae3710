package benchsuite

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/quadrants-go/qd"
)

// portsSrc holds the ports of the CUDA samples' matrixMul, transpose,
// histogram256, scan and sortingNetworks and of Rodinia's hotspot and nw
// to qd's block loops.
//
//go:embed testdata/ports.go
var portsSrc string

// The ports rows time each port as its original program times its
// kernels, for issue 24's bar (each within 1.25 × its original built by
// nvcc on the same GPU). The originals are timed outside qd bench, by
// testdata/ports/run.sh, with drivers of our own that include the
// originals' sources and run their launches with the same sizes and the
// same timing rule (portTime); run.sh joins the two by the rows' names,
// "port PROGRAM CONFIG", which its drivers print as "nvcc PROGRAM CONFIG
// MS". A row whose result differs from the plain-Go reference is a FAIL
// with the difference, never a figure.

// portCase is one timed configuration of one port.
type portCase struct {
	prog, config string // the row's name, as the drivers print it
	note         string
	run          func(e *portEnv) (time.Duration, error)
}

// portEnv is what a port needs: the Program (default or fast math), its
// module of the ports, a stream and the suite (sizes, GPU or CPU).
type portEnv struct {
	s  *suite
	p  *qd.Program
	m  *qd.Module
	st *qd.Stream
}

// ports adds a row per port configuration. Integer ports run once; the
// float ones (matrixMul, hotspot) twice: with qd's default exact float
// semantics ("PROGRAM", beside nvcc -fmad=false) and with qd.WithFastMath
// ("PROGRAM:fma", beside nvcc's default contraction to fused
// multiply-adds).
func (s *suite) ports() error {
	exact, err := s.portEnv(s.p)
	if err != nil {
		return err
	}
	defer exact.st.Close()
	q, err := qd.Init(qd.WithArch(s.p.Arch()), qd.WithFastMath())
	if err != nil {
		return err
	}
	defer q.Close()
	fast, err := s.portEnv(q)
	if err != nil {
		return err
	}
	defer fast.st.Close()
	for _, c := range s.portCases() {
		e := exact
		if c.prog == "matrixMul:fma" || c.prog == "hotspot:fma" {
			e = fast
		}
		name := "port " + c.prog + " " + c.config
		s.logf("  %s", name)
		d, err := c.run(e)
		if err != nil {
			s.add(Row{Name: name, Status: Fail, Note: "error: " + err.Error()})
			continue
		}
		s.add(Row{Name: name, Value: ms(d), Unit: "ms", Status: Info,
			Note: c.note + "; median run; against nvcc in testdata/ports/run.sh"})
	}
	return nil
}

func (s *suite) portEnv(p *qd.Program) (*portEnv, error) {
	m, err := qd.Compile(p, portsSrc, qd.WithFilename("ports.go"))
	if err != nil {
		return nil, err
	}
	st, err := p.NewStream()
	if err != nil {
		return nil, err
	}
	return &portEnv{s: s, p: p, m: m, st: st}, nil
}

// portCases are the configurations, each the original's default run or,
// where that is a few microseconds of work, a larger one beside it
// (testdata/ports/README.md lists them); small ones in quick mode and on
// the CPU. run.sh's drivers use the GPU sizes.
func (s *suite) portCases() []portCase {
	mm := func(hA, wA, wB int) []portCase {
		cfg := fmt.Sprintf("%dx%dx%d", hA, wA, wB)
		note := "1 launch of (wB/32)·(hA/32) blocks of 32×32, 32×32 shared tiles"
		return []portCase{
			{"matrixMul", cfg, note + ", exact float", func(e *portEnv) (time.Duration, error) { return e.matrixMul(hA, wA, wB) }},
			{"matrixMul:fma", cfg, note + ", fast math", func(e *portEnv) (time.Duration, error) { return e.matrixMul(hA, wA, wB) }},
		}
	}
	tr := func(n int) []portCase {
		cfg := fmt.Sprint(n)
		return []portCase{
			{"transpose-copy", cfg, "the sample's copy kernel, 32×16 threads per 32×32 tile", func(e *portEnv) (time.Duration, error) { return e.transpose("transposeCopy", n) }},
			{"transpose", cfg, "transposeNoBankConflicts, 32×33 shared tile, 32×16 threads", func(e *portEnv) (time.Duration, error) { return e.transpose("transposeNoBankConflicts", n) }},
		}
	}
	hs := func(n, pyramid, steps int) []portCase {
		cfg := fmt.Sprintf("%d/%d/%d", n, pyramid, steps)
		note := fmt.Sprintf("%d launches of 16×16 blocks, pyramid height %d", (steps+pyramid-1)/pyramid, pyramid)
		return []portCase{
			{"hotspot", cfg, note + ", exact float", func(e *portEnv) (time.Duration, error) { return e.hotspot(n, pyramid, steps) }},
			{"hotspot:fma", cfg, note + ", fast math", func(e *portEnv) (time.Duration, error) { return e.hotspot(n, pyramid, steps) }},
		}
	}
	scanN := s.pick(4*4096, 1<<20, 13*1048576/2)
	scanLarge := s.pick(4096, 262144, 262144)
	sortN := s.pick(8192, 1<<16, 1<<20)
	histBytes := s.pick(64<<10, 4<<20, 64<<20)
	nwN := s.pick(64, 512, 2048)
	var cases []portCase
	if s.opt.Quick || !s.gpu {
		cases = append(cases, mm(64, 64, 96)...)
		cases = append(cases, tr(s.pick(64, 1024, 0))...)
	} else {
		cases = append(cases, mm(320, 320, 640)...)
		cases = append(cases, mm(2048, 2048, 2048)...)
		cases = append(cases, tr(1024)...)
		cases = append(cases, tr(8192)...)
	}
	cases = append(cases,
		portCase{"histogram256", fmt.Sprint(histBytes), "histogram256Kernel (240 blocks, 6 warp sub-histograms) + mergeHistogram256Kernel",
			func(e *portEnv) (time.Duration, error) { return e.histogram(histBytes) }},
		portCase{"scan-short", fmt.Sprintf("%d/1024", scanN), "scanExclusiveShared, arrays of 1024",
			func(e *portEnv) (time.Duration, error) { return e.scan(scanN, 1024) }},
		portCase{"scan-large", fmt.Sprintf("%d/%d", scanN, scanLarge), fmt.Sprintf("scanExclusiveShared + scanExclusiveShared2 + uniformUpdate, arrays of %d", scanLarge),
			func(e *portEnv) (time.Duration, error) { return e.scan(scanN, scanLarge) }},
		portCase{"bitonicSort", fmt.Sprint(sortN), "bitonicSortShared1, bitonicMergeGlobal, bitonicMergeShared; one array, descending",
			func(e *portEnv) (time.Duration, error) { return e.bitonic(sortN) }})
	if s.opt.Quick || !s.gpu {
		cases = append(cases, hs(s.pick(64, 512, 0), 2, s.pick(4, 2, 0))...)
	} else {
		cases = append(cases, hs(512, 2, 2)...)
		cases = append(cases, hs(4096, 2, 60)...)
	}
	cases = append(cases, portCase{"nw", fmt.Sprintf("%d/10", nwN), fmt.Sprintf("%d launches of needle_cuda_shared_1/2, 16 threads a block", 2*(nwN/16)-1),
		func(e *portEnv) (time.Duration, error) { return e.nw(nwN, 10) }})
	return cases
}

// portTime is the median time of one run (one call of run: the
// original's timed unit, its launches in order) over trials, each trial
// the mean of as many back-to-back runs as fill about 2 ms (1 to 1000),
// after two warm-up runs: device time from timing events on a GPU, wall
// clock on the CPU. The drivers (testdata/ports/common.h) time the
// originals by the same rule.
func (e *portEnv) portTime(run func() error) (time.Duration, error) {
	trials := 15
	if e.s.opt.Quick || !e.s.gpu {
		trials = 3
	}
	batch := func(inner int) (time.Duration, error) {
		if !e.s.gpu {
			t0 := time.Now()
			for range inner {
				if err := run(); err != nil {
					return 0, err
				}
			}
			err := e.st.Synchronize()
			return time.Since(t0) / time.Duration(inner), err
		}
		e0, err := e.p.NewEvent(qd.WithTiming())
		if err != nil {
			return 0, err
		}
		defer e0.Close()
		e1, err := e.p.NewEvent(qd.WithTiming())
		if err != nil {
			return 0, err
		}
		defer e1.Close()
		if err := e0.Record(e.st); err != nil {
			return 0, err
		}
		for range inner {
			if err := run(); err != nil {
				return 0, err
			}
		}
		if err := e1.Record(e.st); err != nil {
			return 0, err
		}
		if err := e1.Synchronize(); err != nil {
			return 0, err
		}
		d, err := qd.Elapsed(e0, e1)
		return d / time.Duration(inner), err
	}
	for range 2 {
		if err := run(); err != nil {
			return 0, err
		}
	}
	one, err := batch(1)
	if err != nil {
		return 0, err
	}
	inner := 1
	if e.s.gpu && !e.s.opt.Quick {
		inner = int(min(1000, max(1, math.Ceil(float64(2*time.Millisecond)/float64(max(one, 1))))))
	}
	ds := make([]time.Duration, trials)
	for i := range ds {
		if ds[i], err = batch(inner); err != nil {
			return 0, err
		}
	}
	slices.Sort(ds)
	return ds[trials/2], nil
}

// nd makes an Ndarray of shape holding host (nil: zeros), closed by
// e.closeAll; the first error sticks in *err and later calls do nothing.
func nd[T qd.Elem](e *portEnv, err *error, open *[]func() error, host []T, shape ...int) *qd.Ndarray[T] {
	if *err != nil {
		return nil
	}
	a, er := qd.NewNdarray[T](e.p, shape...)
	if er == nil {
		*open = append(*open, a.Close)
		if host != nil {
			er = a.CopyFromHost(host)
		}
	}
	*err = er
	return a
}

func closeAll(open []func() error) {
	for _, c := range open {
		c()
	}
}

// kernels looks up the named kernels of the ports module.
func (e *portEnv) kernels(names ...string) ([]*qd.Kernel, error) {
	ks := make([]*qd.Kernel, len(names))
	for i, n := range names {
		k, err := e.m.Kernel(n)
		if err != nil {
			return nil, err
		}
		ks[i] = k
	}
	return ks, nil
}
