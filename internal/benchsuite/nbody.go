package benchsuite

import (
	_ "embed"
	"errors"
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

// nbodyVecSrc is the same step written with qd.Vec3 (positions and
// accelerations as arrays of vectors): its row must be within 2 % of the
// scalar row's time, and its accelerations equal the scalar kernel's.
//
//go:embed testdata/nbody_vec.go
var nbodyVecSrc string

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
		d, ax, err := nbodyTime(on, n, nbodySrc, "nbody")
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
		if fast {
			continue
		}
		// The value types' cost: Vec3 values over the same arrays, with
		// the bar; then Vec3 arrays too, which change the memory layout
		// (one array of 12-byte elements for three of 4), for information.
		ds, asx, err := nbodyTime(on, n, nbodyVecSrc, "nbodyVecSoA")
		if err != nil {
			return err
		}
		dv, avx, err := nbodyVecTime(on, n)
		if err != nil {
			return err
		}
		rows := []Row{
			{Name: name + ", Vec3 values", Value: ms(ds), Unit: "ms", RefName: name, RefValue: ms(d), Ratio: ds.Seconds() / d.Seconds(),
				Note: "the same loop with qd.Vec3 values (Sub, Dot, Scale, Add) over the same arrays; ratio = Vec3 time / scalar time"},
			{Name: name + ", Vec3 arrays", Value: ms(dv), Unit: "ms", RefName: name, RefValue: ms(d), Ratio: dv.Seconds() / d.Seconds(), Status: Info,
				Note: "the Vec3 loop over []qd.Vec3[float32] positions and accelerations (array-of-structs layout); ratio = its time / scalar time"},
		}
		if s.p.Arch() == qd.CPU {
			rows[0].Status = Info // the bar is the GPUs'; the CPU rows measure the CPU backend
		} else {
			barLE(&rows[0], 1.02)
		}
		for k, got := range [][]float32{asx, avx} {
			for i := range ax {
				if ax[i] != got[i] {
					rows[k].Status, rows[k].Note = Fail, fmt.Sprintf("body %d: acceleration x %v differs from the scalar kernel's %v", i, got[i], ax[i])
					break
				}
			}
		}
		for _, r := range rows {
			s.add(r)
		}
	}
	return nil
}

// nbodyInit is body j's coordinate i (0–2) or, for i == 3, its mass.
func nbodyInit(i, j int) float32 {
	v := float32(math.Sin(float64(j*(i+3)) * 0.7))
	if i == 3 {
		return 1 + v*v
	}
	return v
}

// nbodyTime times kernel name of src, which takes the scalar kernel's
// arrays, and returns the accelerations' x.
func nbodyTime(s *suite, n int, src, name string) (d time.Duration, ax []float32, err error) {
	p := s.p
	mod, err := qd.Compile(p, src, qd.WithFilename(name+".go"))
	if err != nil {
		return 0, nil, err
	}
	defer mod.Close()
	k, err := mod.Kernel(name)
	if err != nil {
		return 0, nil, err
	}
	arrays := make([]*qd.Ndarray[float32], 7)
	for i := range arrays {
		if arrays[i], err = qd.NewNdarray[float32](p, n); err != nil {
			return 0, nil, err
		}
		defer arrays[i].Close()
	}
	col := make([]float32, n)
	for i := range 4 {
		for j := range col {
			col[j] = nbodyInit(i, j)
		}
		if err := arrays[i].CopyFromHost(col); err != nil {
			return 0, nil, err
		}
	}
	st, err := p.NewStream()
	if err != nil {
		return 0, nil, err
	}
	defer st.Close()
	args := []any{arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], arrays[5], arrays[6], float32(1e-3)}
	if d, err = s.timeKernel(st, s.pick(1, 3, 10), func() error { return k.LaunchOn(st, args...) }); err != nil {
		return 0, nil, err
	}
	ax, err = arrays[4].ToSlice()
	return d, ax, err
}

// nbodyVecTime times the Vec3 kernel on the same bodies and returns the
// accelerations' x.
func nbodyVecTime(s *suite, n int) (d time.Duration, ax []float32, err error) {
	p := s.p
	mod, err := qd.Compile(p, nbodyVecSrc, qd.WithFilename("nbody_vec.go"))
	if err != nil {
		return 0, nil, err
	}
	defer mod.Close()
	k, err := mod.Kernel("nbodyVec")
	if err != nil {
		return 0, nil, err
	}
	pos, err := qd.NewNdarray[qd.Vec3[float32]](p, n)
	if err != nil {
		return 0, nil, err
	}
	defer pos.Close()
	acc, err := qd.NewNdarray[qd.Vec3[float32]](p, n)
	if err != nil {
		return 0, nil, err
	}
	defer acc.Close()
	m, err := qd.NewNdarray[float32](p, n)
	if err != nil {
		return 0, nil, err
	}
	defer m.Close()
	hp, hm := make([]qd.Vec3[float32], n), make([]float32, n)
	for j := range n {
		hp[j] = qd.Vec3[float32]{nbodyInit(0, j), nbodyInit(1, j), nbodyInit(2, j)}
		hm[j] = nbodyInit(3, j)
	}
	if err := errors.Join(pos.CopyFromHost(hp), m.CopyFromHost(hm)); err != nil {
		return 0, nil, err
	}
	st, err := p.NewStream()
	if err != nil {
		return 0, nil, err
	}
	defer st.Close()
	if d, err = s.timeKernel(st, s.pick(1, 3, 10), func() error { return k.LaunchOn(st, pos, m, acc, float32(1e-3)) }); err != nil {
		return 0, nil, err
	}
	out, err := acc.ToSlice()
	if err != nil {
		return 0, nil, err
	}
	ax = make([]float32, n)
	for j, a := range out {
		ax[j] = a[0]
	}
	return d, ax, nil
}
