package native

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Runner runs the chunks of a parallel loop: the CPU backend's workers.
type Runner interface {
	// Parallel calls chunk(lo, hi) for consecutive ranges covering
	// [0, n), on the calling goroutine and on helpers, and returns once
	// every call has returned. weight is the work of one iteration in
	// units of a simple loop body (a block's threads), so that short
	// loops of heavy iterations are split too. chunk never panics.
	Parallel(n, weight int64, chunk func(lo, hi int64))
}

// Launch is one launch of a generated kernel: its arguments, where its
// parallel loops run, and the first failure of its iterations.
type Launch struct {
	kernel, file string
	scalars      []uint64
	arrays       []Array
	stop         *atomic.Bool
	runner       Runner
	err          atomic.Pointer[error]
}

// NewLaunch is the CPU backend's: a launch of kernel (from file) with the
// launch's scalars (ir.Const bit patterns) and arrays, both indexed by
// parameter position, its stop flag (nil: never stopped) and its runner.
func NewLaunch(kernel, file string, scalars []uint64, arrays []Array, stop *atomic.Bool, r Runner) *Launch {
	return &Launch{kernel: kernel, file: file, scalars: scalars, arrays: arrays, stop: stop, runner: r}
}

// ErrStopped is what Run returns when the launch's stop flag was set.
var ErrStopped = errors.New("native kernel stopped")

// stopped is the panic of Check: unwinding the kernel's loops is the
// cheapest way out of them.
type stopped struct{}

// Run runs f, a generated kernel, and returns the first failure of its
// iterations: a Go run-time error (an index out of range, a division by
// zero), with the kernel's file:line:col, or ErrStopped.
func (l *Launch) Run(f Func) error {
	l.guard(func() { f(l) })
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

// guard runs f, keeping a panic as the launch's error.
func (l *Launch) guard(f func()) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(rethrow); !ok {
				l.fail(l.panicErr(p))
			}
		}
	}()
	f()
}

func (l *Launch) fail(err error) { l.err.CompareAndSwap(nil, &err) }

// failed reports whether an iteration has failed, so that the chunks not
// yet started do not start.
func (l *Launch) failed() bool { return l.err.Load() != nil }

// panicErr turns a panic of the kernel's code into its error. It runs in
// the deferred function, while the panicking frames are still on the
// stack: the innermost frame in the kernel's file is the failure's place.
func (l *Launch) panicErr(p any) error {
	if _, ok := p.(stopped); ok {
		return ErrStopped
	}
	where := ""
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		fr, more := frames.Next()
		if fr.File != "" && (fr.File == l.file || filepath.Base(fr.File) == filepath.Base(l.file)) && !strings.HasSuffix(fr.File, "_qdgen.go") {
			where = fmt.Sprintf("%s:%d: ", l.file, fr.Line)
			break
		}
		if !more {
			break
		}
	}
	msg := fmt.Sprint(p)
	if e, ok := p.(error); ok {
		msg = e.Error()
	}
	return fmt.Errorf("%skernel %s: %s", where, l.kernel, msg)
}

// Check ends the kernel when its launch must stop (a context done,
// Program.Close); qd gen puts one at the top of every loop body.
func (l *Launch) Check() {
	if l.stop != nil && l.stop.Load() {
		panic(stopped{})
	}
}

// parallel runs a parallel loop of n iterations through the runner.
func (l *Launch) parallel(n, weight int64, body func(lo, hi int64)) {
	if n <= 0 || l.failed() {
		return
	}
	l.Check()
	step := max(1, stepIters/weight)
	l.runner.Parallel(n, weight, func(lo, hi int64) {
		l.guard(func() {
			for lo < hi && !l.failed() {
				l.Check()
				end := min(hi, lo+step)
				body(lo, end)
				lo = end
			}
		})
	})
	if p := l.err.Load(); p != nil {
		panic(rethrow{*p}) // ends the kernel's serial code after the loop
	}
}

// stepIters is the most iterations run between two checks of the stop
// flag, as on the closure path.
const stepIters = 1 << 16

// rethrow carries a failure of a loop's iterations out of the kernel's
// serial code, which must not go on after it.
type rethrow struct{ err error }

// Integer is the set of types a range loop's count may have.
type Integer interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// For runs body over [0, n) in chunks [lo, hi): the kernel's loop
// `for i := range n`.
func For[T Integer](l *Launch, n T, body func(lo, hi T)) {
	if n <= 0 {
		return
	}
	l.parallel(int64(n), 1, func(lo, hi int64) { body(T(lo), T(hi)) })
}

// For2 runs body over the flat indices [0, n·m) of qd.NDRange(n, m).
func For2(l *Launch, n, m int, body func(lo, hi int)) {
	if n <= 0 || m <= 0 {
		return
	}
	l.parallel(int64(n)*int64(m), 1, func(lo, hi int64) { body(int(lo), int(hi)) })
}

// For3 runs body over the flat indices [0, n·m·k) of qd.NDRange3(n, m, k).
func For3(l *Launch, n, m, k int, body func(lo, hi int)) {
	if n <= 0 || m <= 0 || k <= 0 {
		return
	}
	l.parallel(int64(n)*int64(m)*int64(k), 1, func(lo, hi int64) { body(int(lo), int(hi)) })
}

// MaxBlockSize is qd.MaxBlockSize.
const MaxBlockSize = 1024

// Blocks runs body over the blocks [0, n) of qd.Blocks(n, size), each
// weighing its size threads.
func Blocks(l *Launch, n, size int, body func(lo, hi int)) {
	if size < 1 || size > MaxBlockSize {
		l.fail(fmt.Errorf("kernel %s: qd.Blocks block size %d is outside 1..%d: a block has at most %d threads", l.kernel, size, MaxBlockSize, MaxBlockSize))
		panic(rethrow{})
	}
	if n <= 0 {
		return
	}
	l.parallel(int64(n), int64(size), func(lo, hi int64) { body(int(lo), int(hi)) })
}

// Scalar is the launch's scalar parameter i.
func Scalar[T any](l *Launch, i int) T {
	var v T
	b := l.scalars[i]
	switch unsafe.Sizeof(v) {
	case 1:
		*(*uint8)(unsafe.Pointer(&v)) = uint8(b)
	case 2:
		*(*uint16)(unsafe.Pointer(&v)) = uint16(b)
	case 4:
		*(*uint32)(unsafe.Pointer(&v)) = uint32(b)
	case 8:
		*(*uint64)(unsafe.Pointer(&v)) = b
	default:
		panic(fmt.Sprintf("native.Scalar: a %d-byte scalar", unsafe.Sizeof(v)))
	}
	return v
}

// Slice is the launch's 1-D array parameter i as a Go slice of its memory.
func Slice[T any](l *Launch, i int) []T {
	a := l.arrays[i]
	if a.Data == nil {
		return nil
	}
	return unsafe.Slice((*T)(a.Data), a.Shape[0])
}

// Slice2 is the launch's 2-D array parameter i as rows of its memory.
func Slice2[T any](l *Launch, i int) [][]T {
	a := &l.arrays[i]
	if rows, ok := a.cached().([][]T); ok {
		return rows
	}
	rows := make([][]T, a.Shape[0])
	if a.Data != nil {
		flat := unsafe.Slice((*T)(a.Data), a.Shape[0]*a.Shape[1])
		for r := range rows {
			rows[r] = flat[r*a.Shape[1] : (r+1)*a.Shape[1] : (r+1)*a.Shape[1]]
		}
	}
	a.keep(rows)
	return rows
}

// Slice3 is the launch's 3-D array parameter i as planes of rows.
func Slice3[T any](l *Launch, i int) [][][]T {
	a := &l.arrays[i]
	if planes, ok := a.cached().([][][]T); ok {
		return planes
	}
	n, m, k := a.Shape[0], a.Shape[1], a.Shape[2]
	planes := make([][][]T, n)
	rows := make([][]T, n*m)
	if a.Data != nil {
		flat := unsafe.Slice((*T)(a.Data), n*m*k)
		for r := range rows {
			rows[r] = flat[r*k : (r+1)*k : (r+1)*k]
		}
	}
	for p := range planes {
		planes[p] = rows[p*m : (p+1)*m : (p+1)*m]
	}
	a.keep(planes)
	return planes
}
