package benchsuite

import (
	_ "embed"
	"fmt"
	"math"
	"time"

	"github.com/quadrants-go/qd"
)

// nbodySrc is the all-pairs n-body step of the compute-bound rows: every
// body sums the gravitational pull of every other, softened by eps2. The
// same loop in CUDA C is testdata/nbody.cu, the reference built with nvcc
// on a GPU machine (docs/performance.md).
//
//go:embed testdata/nbody.go
var nbodySrc string

// nbody: one all-pairs step over 2^16 bodies (2^10 on the CPU), with Go's
// exact float semantics and with qd.WithFastMath, for information: the
// reference is nvcc's code for the same loop, measured outside qd bench.
func (s *suite) nbody() error {
	n := s.pick(1<<8, 1<<10, 1<<16)
	for _, fast := range []bool{false, true} {
		on := s // timing events come from the Program that runs the kernel
		if fast {
			q, err := qd.Init(qd.WithArch(s.p.Arch()), qd.WithFastMath())
			if err != nil {
				return err
			}
			defer q.Close()
			fs := *s
			fs.p = q
			on = &fs
		}
		d, err := nbodyTime(on, n)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("n-body, 2^%d bodies float32", log2(n))
		note := "exact float semantics (no FMA contraction)"
		if fast {
			name += ", fast math"
			note = "qd.WithFastMath(): contraction, approximate rsqrt"
		}
		pairs := float64(n) * float64(n)
		s.add(Row{Name: name, Value: ms(d), Unit: "ms", Status: Info,
			Note: fmt.Sprintf("%s; %.1f G interactions/s", note, pairs/d.Seconds()/1e9)})
	}
	return nil
}

func nbodyTime(s *suite, n int) (d time.Duration, err error) {
	p := s.p
	mod, err := qd.Compile(p, nbodySrc, qd.WithFilename("nbody.go"))
	if err != nil {
		return 0, err
	}
	defer mod.Close()
	k, err := mod.Kernel("nbody")
	if err != nil {
		return 0, err
	}
	arrays := make([]*qd.Ndarray[float32], 7)
	for i := range arrays {
		if arrays[i], err = qd.NewNdarray[float32](p, n); err != nil {
			return 0, err
		}
		defer arrays[i].Close()
	}
	pos := make([]float32, n)
	for i := range 4 {
		for j := range pos {
			pos[j] = float32(math.Sin(float64(j*(i+3)) * 0.7))
			if i == 3 {
				pos[j] = 1 + pos[j]*pos[j] // masses
			}
		}
		if err := arrays[i].CopyFromHost(pos); err != nil {
			return 0, err
		}
	}
	st, err := p.NewStream()
	if err != nil {
		return 0, err
	}
	defer st.Close()
	args := []any{arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], arrays[5], arrays[6], float32(1e-3)}
	return s.timeKernel(st, s.pick(1, 3, 10), func() error { return k.LaunchOn(st, args...) })
}
