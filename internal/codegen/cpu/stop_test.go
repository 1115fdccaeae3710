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
// x[0] first, so the host knows it runs).
func TestStopEndsLoops(t *testing.T) {
	for _, where := range []string{"parallel", "serial"} {
		for _, when := range []string{"before", "while running"} {
			t.Run(where+"/"+when, func(t *testing.T) {
				b := ir.NewBuilder("spin")
				x := b.Array("x", ir.I32, 1)
				body := func() {
					b.Do(ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(0)))
					b.While(ir.BoolC(true), func() { b.Do(ir.AtomicE(ir.AtomicAdd, x, ir.I32c(1), ir.I64c(1))) })
				}
				if where == "parallel" {
					b.Parallel(ir.I64c(4), func(*ir.Var) { body() })
				} else {
					body()
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
