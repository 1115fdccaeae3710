package benchsuite

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"
)

// cpuMachine measures what two goroutines of plain Go get over one on
// this machine, for a compute-bound and a memory-bound loop split in two
// by hand: the ceiling of the 2-core rows, whose bar (1.8) a machine of
// shared or throttled cores may not reach for any program.
func (s *suite) cpuMachine() error {
	if s.gpu {
		s.skip("CPU machine scaling", "CPU only: run qd bench -arch cpu")
		return nil
	}
	if runtime.NumCPU() < 2 {
		s.skip("cpu machine: plain Go on 2 goroutines vs 1", "this machine has one core")
		return nil
	}
	loops := []struct {
		name string
		n    int
		f    func(x, y []float32)
	}{
		{"compute-bound loop (degree-32 polynomial)", 1 << 18, poly},
		{"memory-bound loop (saxpy over 8 MiB)", 1 << 20, func(x, y []float32) { saxpy(2, x, y) }},
	}
	for _, l := range loops {
		n := l.n
		if s.opt.Quick {
			n /= 16
		}
		x, y := unitInputs(n), make([]float32, n)
		whole := func() error { l.f(x, y); return nil }
		halves := func() error {
			var wg sync.WaitGroup
			for h := range 2 {
				wg.Go(func() { l.f(x[h*n/2:(h+1)*n/2], y[h*n/2:(h+1)*n/2]) })
			}
			wg.Wait()
			return nil
		}
		d, _ := timed(1, 1, whole)
		reps := cpuReps(s.opt.Quick, d)
		loop := func(f func() error) func() error {
			return func() error {
				for range reps {
					f()
				}
				return nil
			}
		}
		one, two := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
		for range s.pick(2, 15, 15) {
			d, _ = timed(1, reps, loop(whole))
			one = min(one, d)
			d, _ = timed(2, reps, loop(halves))
			two = min(two, d)
		}
		s.add(Row{Name: "cpu machine: plain Go on 2 goroutines vs 1, " + l.name, Value: ns(one) / ns(two), Unit: "×",
			RefName: "ideal", RefValue: 2, Ratio: ns(one) / ns(two), Status: Info,
			Note: fmt.Sprintf("%d elements split in two by hand: what this machine gives the 2-core rows", n)})
	}
	return nil
}
