package qd

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/testarchs"
)

// The behaviour suite runs every test on every backend present: the CPU
// always, CUDA where a device is found (internal/testarchs: probed once,
// kept open for the whole binary; with QD_GPU_RUN=1 a missing CUDA is a
// failure, not a skip).
var suiteProbe = testarchs.New(func(a Arch) (*Program, error) { return Init(WithArch(a)) }, CPU, CUDA, AMDGPU)

func TestMain(m *testing.M) { suiteProbe.Main(m) }

// suiteArchs lists the archs to run the suite on.
func suiteArchs(t *testing.T) []Arch { return suiteProbe.Archs(t) }

// forEachArch runs f as a subtest per arch with a fresh Program, closed
// afterwards.
func forEachArch(t *testing.T, f func(t *testing.T, p *Program)) {
	t.Helper()
	forEachArchWith(t, nil, f)
}

// forEachArchWith is forEachArch with more Init options.
func forEachArchWith(t *testing.T, opts []InitOption, f func(t *testing.T, p *Program)) {
	t.Helper()
	for _, a := range suiteArchs(t) {
		t.Run(a.String(), func(t *testing.T) {
			p, err := Init(append([]InitOption{WithArch(a)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := p.Close(); err != nil {
					t.Errorf("Program.Close: %v", err)
				}
			})
			f(t, p)
		})
	}
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want one matching %v", err, target)
	}
}

// Kernels of the suite, built with the IR builder.

// fillKernel: x[i] = v for every i.
func fillKernel(name string, elem ir.Type) *ir.Kernel {
	b := ir.NewBuilder(name)
	x := b.Array("x", elem, 1)
	v := b.Scalar("v", elem)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) { b.Store(x, ir.P(v), ir.Ref(i)) })
	return b.Kernel()
}

// copyKernel: dst[i] = src[i].
func copyKernel() *ir.Kernel {
	b := ir.NewBuilder("copy")
	src := b.Array("src", ir.F32, 1)
	dst := b.Array("dst", ir.F32, 1)
	b.Parallel(ir.LenOf(dst, 0), func(i *ir.Var) { b.Store(dst, ir.Ld(src, ir.Ref(i)), ir.Ref(i)) })
	return b.Kernel()
}

// addKernel: c[i] = a[i] + b[i].
func addKernel() *ir.Kernel {
	b := ir.NewBuilder("add")
	x := b.Array("a", ir.F32, 1)
	y := b.Array("b", ir.F32, 1)
	z := b.Array("c", ir.F32, 1)
	b.Parallel(ir.LenOf(z, 0), func(i *ir.Var) {
		b.Store(z, ir.Op(ir.Add, ir.Ld(x, ir.Ref(i)), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	return b.Kernel()
}

// slowWriteKernel spins for iters steps of a linear congruential generator
// (kept in state[0] so it cannot be optimised away), then writes
// x[i] = v for every i: a long kernel whose writes land at its end.
func slowWriteKernel() *ir.Kernel {
	b := ir.NewBuilder("slow_write")
	x := b.Array("x", ir.F32, 1)
	v := b.Scalar("v", ir.F32)
	state := b.Array("state", ir.I64, 1)
	iters := b.Scalar("iters", ir.I64)
	b.Parallel(ir.I64c(1), func(_ *ir.Var) {
		spinBody(b, state, iters)
		b.ForRange("j", ir.LenOf(x, 0), func(j *ir.Var) { b.Store(x, ir.P(v), ir.Ref(j)) })
	})
	return b.Kernel()
}

// spinBody adds, to the current block of b, iters steps of a linear
// congruential generator whose end is stored in state[0], so that they
// cannot be optimised away.
func spinBody(b *ir.Builder, state, iters *ir.Param) {
	s := b.Decl("s", ir.I64c(1))
	b.ForRange("n", ir.P(iters), func(_ *ir.Var) {
		b.Assign(s, ir.Op(ir.Rem, ir.Op(ir.Add, ir.Op(ir.Mul, ir.Ref(s), ir.I64c(1664525)), ir.I64c(1013904223)), ir.I64c(2147483647)))
	})
	b.Store(state, ir.Ref(s), ir.I64c(0))
}

// rendezvousBody adds, to the current block of b, one side of a
// rendezvous: raise flags[me], then spin (at most iters steps) until
// flags[other] is raised, and record in seen[me] whether it was. Both sides
// can see each other only if they run at the same time.
func rendezvousBody(b *ir.Builder, flags, seen *ir.Param, me, other, iters ir.Expr) {
	b.Parallel(ir.I64c(1), func(_ *ir.Var) {
		b.Do(ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(1), me))
		found := b.Decl("found", ir.I32c(0))
		b.ForRange("n", iters, func(_ *ir.Var) {
			b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(0), other), ir.I32c(0)), func() {
				b.Assign(found, ir.I32c(1))
				b.Break()
			}, nil)
		})
		b.Store(seen, ir.Ref(found), me)
	})
}

// rendezvousKernel is one side of a rendezvous, the side chosen by me.
func rendezvousKernel() *ir.Kernel {
	b := ir.NewBuilder("rendezvous")
	flags := b.Array("flags", ir.I32, 1)
	seen := b.Array("seen", ir.I32, 1)
	me := b.Scalar("me", ir.I64)
	other := b.Scalar("other", ir.I64)
	iters := b.Scalar("iters", ir.I64)
	rendezvousBody(b, flags, seen, ir.P(me), ir.P(other), ir.P(iters))
	return b.Kernel()
}

// rendezvousGroupsKernel has G stream-parallel groups, group g spinning
// until every other group has raised its flag.
func rendezvousGroupsKernel(groups int) *ir.Kernel {
	b := ir.NewBuilder("rendezvous_groups")
	flags := b.Array("flags", ir.I32, 1)
	seen := b.Array("seen", ir.I32, 1)
	iters := b.Scalar("iters", ir.I64)
	for g := range groups {
		b.Group(func() {
			b.Parallel(ir.I64c(1), func(_ *ir.Var) {
				b.Do(ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(1), ir.I64c(int64(g))))
				count := b.Decl("count", ir.I32c(0))
				b.ForRange("n", ir.P(iters), func(_ *ir.Var) {
					b.Assign(count, ir.I32c(0))
					b.ForRange("o", ir.I64c(int64(groups)), func(o *ir.Var) {
						b.If(ir.Op(ir.Ne, ir.AtomicE(ir.AtomicAdd, flags, ir.I32c(0), ir.Ref(o)), ir.I32c(0)), func() {
							b.Assign(count, ir.Op(ir.Add, ir.Ref(count), ir.I32c(1)))
						}, nil)
					})
					b.If(ir.Op(ir.Eq, ir.Ref(count), ir.I32c(int32(groups))), func() { b.Break() }, nil)
				})
				b.Store(seen, ir.Ref(count), ir.I64c(int64(g)))
			})
		})
	}
	return b.Kernel()
}

func allEqual[T comparable](t testing.TB, what string, got []T, want T) {
	t.Helper()
	for i, v := range got {
		if v != want {
			t.Fatalf("%s[%d] = %v, want %v", what, i, v, want)
		}
	}
}

// spinBound is how many steps a rendezvous kernel spins before it gives up.
// It only has to outlast the skew between launches (microseconds) by far;
// a larger bound only makes a failing run (no overlap) take longer. A GPU
// step reads flags with global atomics (about a microsecond for several),
// a CPU step costs tens of nanoseconds: either way a failure shows within
// seconds, not minutes.
func spinBound(p *Program) int64 {
	if p.Arch() == CPU {
		return 200_000_000
	}
	return 2_000_000
}

// buildKernel compiles a kernel written with the IR builder of package
// internal/ir: the tests' entry point for kernels built by hand (the
// behaviour suite tests the runtime without the front end). Users write
// kernels in Go and call Compile.
func buildKernel(p *Program, k *ir.Kernel) (*Kernel, error) {
	if p == nil || k == nil {
		return nil, fmt.Errorf("%w: buildKernel: nil Program or kernel", ErrInvalidArgument)
	}
	plan, err := lower.Lower(k)
	if err != nil {
		return nil, err
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	c, err := p.newKernel(plan)
	if err != nil {
		return nil, err
	}
	// The handle owns its kernel: its Close, or its cleanup, releases it.
	h := &Kernel{c: c}
	runtime.AddCleanup(h, func(c *kernelCore) { go c.p.releaseLeaked(c) }, c)
	return h, nil
}
