package cpu

import (
	"errors"
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// compileKernel lowers and compiles k, failing the test on an error.
func compileKernel(t testing.TB, k *ir.Kernel) *Program {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	p, err := Compile(plan)
	if err != nil {
		t.Fatalf("compile %s: %v", k.Name, err)
	}
	return p
}

// launch runs every task of p in order, the way a backend does: parallel
// tasks split into chunks of the given size (0: one chunk), run by workers
// goroutines.
func launch(p *Program, a *Args, chunk int64, workers int) error {
	if a.Temps == nil {
		a.Temps = make([]uint64, p.NumTemps)
	}
	for _, t := range p.Tasks {
		r, err := t.Prepare(a)
		if err != nil {
			return err
		}
		if t.Kind == lower.Serial {
			if err := t.Run(a, r, 0, 1); err != nil {
				return err
			}
			continue
		}
		if chunk <= 0 {
			chunk = max(r.Total, 1)
		}
		// first is the error of the lowest failing chunk, not of the one
		// that failed first in time: tests name the error a one-goroutine
		// run gives, whatever the scheduler does.
		var (
			mu      sync.Mutex
			first   error
			firstLo int64
			wg      sync.WaitGroup
			next    int64
		)
		for range max(workers, 1) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					lo := next
					next += chunk
					mu.Unlock()
					if lo >= r.Total {
						return
					}
					if err := t.Run(a, r, lo, min(lo+chunk, r.Total)); err != nil {
						mu.Lock()
						if first == nil || lo < firstLo {
							first, firstLo = err, lo
						}
						mu.Unlock()
						return
					}
				}
			}()
		}
		wg.Wait()
		if first != nil {
			return first
		}
	}
	return nil
}

// arr wraps a Go slice as an array argument of the given shape (1 to 4
// dims; missing dims are 1).
func arr[T scalar](s []T, shape ...int) Array {
	a := Array{Shape: [4]int{1, 1, 1, 1}}
	if len(shape) == 0 {
		shape = []int{len(s)}
	}
	copy(a.Shape[:], shape)
	if len(s) > 0 {
		a.Data = unsafe.Pointer(unsafe.SliceData(s))
	}
	return a
}

func bitsOf[T scalar](v T) uint64 { return toBits(v) }

func constOf[T scalar](v T) ir.Expr {
	return &ir.Const{T: irType[T](), Bits: toBits(v)}
}

// sameBits compares results bit for bit for floats (NaN == NaN, -0 != +0).
func same[T scalar](a, b T) bool {
	switch x := any(a).(type) {
	case float32:
		y := any(b).(float32)
		return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y
	case float64:
		y := any(b).(float64)
		return math.Float64bits(x) == math.Float64bits(y) || x != x && y != y
	}
	return a == b
}

// wantErr checks that err is an *ir.Error whose text is want.
func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	var ie *ir.Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %v (%T), want *ir.Error %q", err, err, want)
	}
	if err.Error() != want {
		t.Fatalf("error\n  %q\nwant\n  %q", err.Error(), want)
	}
}

func unsafeData(d []uint64) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(d)) }
