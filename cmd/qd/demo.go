package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/ir"
)

// demo runs sims independent 2-D heat-diffusion simulations twice: all on
// one stream, then one stream each, checks both against a plain Go
// reference, and prints the times.
func demo(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", stderr)
	archName := fs.String("arch", "auto", "backend: auto, cpu, cuda")
	sims := fs.Int("sims", 8, "number of independent simulations (one stream each)")
	size := fs.Int("size", 256, "grid size of each simulation (size × size)")
	steps := fs.Int("steps", 50, "time steps per simulation")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	arch, ok := map[string]qd.Arch{"auto": qd.Auto, "cpu": qd.CPU, "cuda": qd.CUDA, "amdgpu": qd.AMDGPU}[*archName]
	if !ok || *sims < 1 || *size < 3 || *steps < 1 {
		fmt.Fprintln(stderr, "qd demo: -arch must be auto, cpu, cuda or amdgpu; -sims ≥ 1, -size ≥ 3, -steps ≥ 1")
		return 2
	}
	if err := runDemo(arch, *sims, *size, *steps, stdout); err != nil {
		fmt.Fprintln(stderr, "qd demo:", err)
		return 1
	}
	return 0
}

// heatStep builds the kernel out = in + alpha·∇²in on the interior, with
// fixed boundaries.
func heatStep() *ir.Kernel {
	b := ir.NewBuilder("heat_step")
	in := b.Array("in", ir.F32, 2)
	out := b.Array("out", ir.F32, 2)
	alpha := b.Scalar("alpha", ir.F32)
	b.Parallel2(ir.LenOf(in, 0), ir.LenOf(in, 1), func(i, j *ir.Var) {
		I, J := ir.Ref(i), ir.Ref(j)
		one := ir.I64c(1)
		interior := ir.Op(ir.LAnd,
			ir.Op(ir.LAnd, ir.Op(ir.Gt, I, ir.I64c(0)), ir.Op(ir.Lt, I, ir.Op(ir.Sub, ir.LenOf(in, 0), one))),
			ir.Op(ir.LAnd, ir.Op(ir.Gt, J, ir.I64c(0)), ir.Op(ir.Lt, J, ir.Op(ir.Sub, ir.LenOf(in, 1), one))))
		b.If(interior, func() {
			c := b.Decl("c", ir.Ld(in, I, J))
			lap := ir.Op(ir.Sub,
				ir.Op(ir.Add, ir.Op(ir.Add, ir.Ld(in, ir.Op(ir.Sub, I, one), J), ir.Ld(in, ir.Op(ir.Add, I, one), J)),
					ir.Op(ir.Add, ir.Ld(in, I, ir.Op(ir.Sub, J, one)), ir.Ld(in, I, ir.Op(ir.Add, J, one)))),
				ir.Op(ir.Mul, ir.F32c(4), ir.Ref(c)))
			b.Store(out, ir.Op(ir.Add, ir.Ref(c), ir.Op(ir.Mul, ir.P(alpha), lap)), I, J)
		}, func() {
			b.Store(out, ir.Ld(in, I, J), I, J)
		})
	})
	return b.Kernel()
}

const alpha = 0.2

// initial is simulation k's starting grid: a hot spot whose place depends
// on k, so every simulation differs.
func initial(k, size int) []float32 {
	g := make([]float32, size*size)
	ci, cj := size/4+k%(size/2), size/2
	for i := range size {
		for j := range size {
			d := float64((i-ci)*(i-ci) + (j-cj)*(j-cj))
			g[i*size+j] = float32(100 * math.Exp(-d/float64(size)))
		}
	}
	return g
}

// reference runs the same simulation in plain Go.
func reference(g []float32, size, steps int) []float32 {
	a := append([]float32(nil), g...)
	b := make([]float32, len(a))
	for range steps {
		for i := range size {
			for j := range size {
				c := a[i*size+j]
				if i > 0 && i < size-1 && j > 0 && j < size-1 {
					lap := (a[(i-1)*size+j] + a[(i+1)*size+j]) + (a[i*size+j-1] + a[i*size+j+1]) - 4*c
					b[i*size+j] = c + alpha*lap
				} else {
					b[i*size+j] = c
				}
			}
		}
		a, b = b, a
	}
	return a
}

type sim struct {
	a, b *qd.Ndarray[float32]
}

func runDemo(arch qd.Arch, sims, size, steps int, w io.Writer) error {
	p, err := qd.Init(qd.WithArch(arch))
	if err != nil {
		return err
	}
	defer p.Close()
	k, err := qd.BuildKernel(p, heatStep())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "qd demo: %d heat simulations of %d×%d, %d steps, on %s\n", sims, size, size, steps, p.Device())
	state := make([]sim, sims)
	for i := range state {
		if state[i].a, err = qd.NewNdarray[float32](p, size, size); err != nil {
			return err
		}
		if state[i].b, err = qd.NewNdarray[float32](p, size, size); err != nil {
			return err
		}
	}
	streams := make([]*qd.Stream, sims)
	for i := range streams {
		if streams[i], err = p.NewStream(); err != nil {
			return err
		}
	}
	refs := make([][]float32, sims)
	for i := range refs {
		refs[i] = reference(initial(i, size), size, steps)
	}
	// run launches every simulation, each on on(i), and waits for all.
	run := func(on func(i int) *qd.Stream) (time.Duration, error) {
		for i, s := range state {
			if err := s.a.CopyFromHost(initial(i, size)); err != nil {
				return 0, err
			}
		}
		if err := p.Sync(); err != nil {
			return 0, err
		}
		start := time.Now()
		// Breadth-first: step t of every simulation before step t+1.
		for t := range steps {
			for i, s := range state {
				in, out := s.a, s.b
				if t%2 == 1 {
					in, out = out, in
				}
				if err := k.LaunchOn(on(i), in, out, float32(alpha)); err != nil {
					return 0, err
				}
			}
		}
		if err := p.Sync(); err != nil {
			return 0, err
		}
		elapsed := time.Since(start)
		for i, s := range state {
			final := s.a
			if steps%2 == 1 {
				final = s.b
			}
			got, err := final.ToSlice()
			if err != nil {
				return 0, err
			}
			if err := compare(got, refs[i]); err != nil {
				return 0, fmt.Errorf("simulation %d: %w", i, err)
			}
		}
		return elapsed, nil
	}
	serial, err := run(func(int) *qd.Stream { return p.DefaultStream() })
	if err != nil {
		return err
	}
	parallel, err := run(func(i int) *qd.Stream { return streams[i] })
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-24s %12s\n", "run", "time")
	fmt.Fprintf(w, "%-24s %12v\n", "one stream", serial.Round(time.Microsecond))
	fmt.Fprintf(w, "%-24s %12v\n", fmt.Sprintf("%d streams", sims), parallel.Round(time.Microsecond))
	fmt.Fprintf(w, "speedup %.2f×; results match the Go reference\n", float64(serial)/float64(parallel))
	return nil
}

// compare checks a simulation against its reference (exactly on the CPU;
// GPUs may fuse multiply-adds, so allow a small relative error).
func compare(got, want []float32) error {
	for i := range want {
		d := math.Abs(float64(got[i] - want[i]))
		if d > 1e-3*math.Max(1, math.Abs(float64(want[i]))) {
			return fmt.Errorf("cell %d = %v, reference %v", i, got[i], want[i])
		}
	}
	return nil
}
