package cpu

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/quadrants-go/qd/internal/ir"
)

// TestStopEndsLoops: a kernel whose loop never ends, in a parallel body or
// in a serial part, returns ErrStopped once Args.Stop is set: already set
// before it runs, or set by another goroutine while it spins (it raises
// x[0] first, so the host knows it runs). The converted loop (loopconv.go)
// is a path of its own: a varying condition that stays true and a body of
// local assignments only.
func TestStopEndsLoops(t *testing.T) {
	spins := []struct {
		name     string
		parallel bool
		loop     func(b *ir.Builder, x *ir.Param, i *ir.Var)
	}{
		{"parallel", true, func(b *ir.Builder, x *ir.Param, _ *ir.Var) {
			b.While(ir.BoolC(true), func() { b.Do(ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(1))) })
		}},
		{"serial", false, func(b *ir.Builder, x *ir.Param, _ *ir.Var) {
			b.While(ir.BoolC(true), func() { b.Do(ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(1))) })
		}},
		{"converted", true, func(b *ir.Builder, _ *ir.Param, i *ir.Var) {
			v := b.Decl("v", ir.Conv(ir.I32, ir.Ref(i)))
			b.While(ir.Op(ir.Ge, ir.Ref(v), ir.I32c(0)), func() {
				b.Assign(v, ir.Op(ir.And, ir.Op(ir.Add, ir.Ref(v), ir.I32c(1)), ir.I32c(0xffff)))
			})
		}},
	}
	for _, sp := range spins {
		for _, when := range []string{"before", "while running"} {
			t.Run(sp.name+"/"+when, func(t *testing.T) {
				b := ir.NewBuilder("spin")
				x := b.Array("x", ir.I32, 1)
				body := func(i *ir.Var) {
					b.Do(ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(0)))
					sp.loop(b, x, i)
				}
				if sp.parallel {
					b.Parallel(ir.I64c(4), body)
				} else {
					body(nil)
				}
				p := compileKernel(t, b.Kernel())
				xs := make([]int32, 2)
				var stop atomic.Bool
				a := &Args{Arrays: []Array{arr(xs)}, Stop: &stop}
				if when == "before" {
					stop.Store(true)
				}
				done := make(chan error, 1)
				go func() { done <- launch(p, a, 0, 1) }()
				if when != "before" {
					for i := 0; atomic.LoadInt32(&xs[0]) == 0; i++ {
						if i > 100_000_000 {
							t.Fatal("the kernel never started")
						}
						runtime.Gosched()
					}
					stop.Store(true)
				}
				if err := <-done; !errors.Is(err, ErrStopped) {
					t.Fatalf("Run = %v, want ErrStopped", err)
				}
			})
		}
	}
}
