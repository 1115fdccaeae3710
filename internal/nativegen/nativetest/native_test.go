package nativetest

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/nativegen"
)

//go:embed kernels.go
var kernelSrc string

// programs are the modules' Programs.
var programs = map[*qd.Module]*qd.Program{}

// paths are the two ways the CPU runs a kernel.
var paths = []struct {
	name string
	on   bool
}{{"native", true}, {"closures", false}}

func program(t *testing.T, native bool) (*qd.Program, *qd.Module) {
	t.Helper()
	p, err := qd.Init(qd.WithArch(qd.CPU), qd.WithNative(native))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	m, err := qd.Compile(p, kernelSrc)
	if err != nil {
		t.Fatal(err)
	}
	programs[m] = p
	return p, m
}

func launch(t *testing.T, m *qd.Module, name string, args ...any) error {
	t.Helper()
	p := programs[m]
	k, err := m.Kernel(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Launch(args...); err != nil {
		return err
	}
	return p.Synchronize()
}

// nd is a 2-D Ndarray holding rows.
func nd[T qd.Elem](t *testing.T, p *qd.Program, rows [][]T) *qd.Ndarray[T] {
	t.Helper()
	a, err := qd.NewNdarray[T](p, len(rows), len(rows[0]))
	if err != nil {
		t.Fatal(err)
	}
	var flat []T
	for _, r := range rows {
		flat = append(flat, r...)
	}
	if err := a.CopyFromHost(flat); err != nil {
		t.Fatal(err)
	}
	return a
}

func rows[T any](n, m int, f func(i, j int) T) [][]T {
	out := make([][]T, n)
	for i := range out {
		out[i] = make([]T, m)
		for j := range out[i] {
			out[i][j] = f(i, j)
		}
	}
	return out
}

func flat[T any](r [][]T) []T {
	var out []T
	for _, x := range r {
		out = append(out, x...)
	}
	return out
}

func read[T qd.Elem](t *testing.T, a *qd.Ndarray[T]) []T {
	t.Helper()
	s, err := a.ToSlice()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNativeMatchesClosures runs every kernel natively on the CPU and on
// the closures, against the kernel called as plain Go: the results are
// the same, bit for bit.
func TestNativeMatchesClosures(t *testing.T) {
	const n = 10007 // several chunks on two cores, and a ragged end
	cases := []struct {
		name string
		run  func(t *testing.T, p *qd.Program, m *qd.Module) string // on qd
		ref  func() string                                          // as plain Go
	}{
		{"scaleAdd", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			x, y, total := ramp(n), ones(n), make([]float32, 1)
			check(t, launch(t, m, "scaleAdd", float32(3), x, y, total))
			return fmt.Sprint(y, total)
		}, func() string {
			x, y, total := ramp(n), ones(n), make([]float32, 1)
			scaleAdd(3, x, y, total)
			return fmt.Sprint(y, total)
		}},
		{"countdown", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			out := make([]int32, n)
			check(t, launch(t, m, "countdown", int32(n), out))
			return fmt.Sprint(out)
		}, func() string { out := make([]int32, n); countdown(n, out); return fmt.Sprint(out) }},
		{"negate", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			x := []float64{1, -2, 3.5, 0}
			check(t, launch(t, m, "negate", x))
			return fmt.Sprint(x)
		}, func() string { x := []float64{1, -2, 3.5, 0}; negate(x); return fmt.Sprint(x) }},
		{"grid", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			in := nd(t, p, rows(67, 151, func(i, j int) float32 { return float32(i*j%17) / 3 }))
			out := nd(t, p, rows(67, 151, func(i, j int) float32 { return 0 }))
			check(t, launch(t, m, "grid", in, out, []int32{0, 1, 2, 5}))
			return fmt.Sprint(read(t, out))
		}, func() string {
			in := rows(67, 151, func(i, j int) float32 { return float32(i*j%17) / 3 })
			out := rows(67, 151, func(i, j int) float32 { return 0 })
			grid(in, out, []int32{0, 1, 2, 5})
			return fmt.Sprint(flat(out))
		}},
		{"volume", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			v, err := qd.NewNdarray[int32](p, 7, 33, 65)
			check(t, err)
			check(t, launch(t, m, "volume", v))
			return fmt.Sprint(read(t, v))
		}, func() string {
			v := make([][][]int32, 7)
			var all []int32
			for i := range v {
				v[i] = rows(33, 65, func(int, int) int32 { return 0 })
			}
			volume(v)
			for i := range v {
				all = append(all, flat(v[i])...)
			}
			return fmt.Sprint(all)
		}},
		{"reverseBlocks", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			x, y, sums := ramp(64*300), make([]float32, 64*300), make([]float32, 300)
			check(t, launch(t, m, "reverseBlocks", x, y, sums))
			return fmt.Sprint(y, sums)
		}, func() string {
			x, y, sums := ramp(64*300), make([]float32, 64*300), make([]float32, 300)
			reverseBlocks(x, y, sums)
			return fmt.Sprint(y, sums)
		}},
		{"histogram", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			d, bins := bytesOf(1<<18), make([]uint32, 16)
			check(t, launch(t, m, "histogram", d, bins))
			return fmt.Sprint(bins)
		}, func() string {
			d, bins := bytesOf(1<<18), make([]uint32, 16)
			histogram(d, bins)
			return fmt.Sprint(bins)
		}},
		// Long enough for private copies (native), and too short for them.
		{"scatter", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			return runScatter(t, m, 1<<18, 64)
		}, func() string { return runScatter(t, nil, 1<<18, 64) }},
		{"scatterShort", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			return runScatter(t, m, 300, 64)
		}, func() string { return runScatter(t, nil, 300, 64) }},
		{"scatter2", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			return runScatter2(t, p, m, 1<<17)
		}, func() string { return runScatter2(t, nil, nil, 1<<17) }},
		{"scatter2Short", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			return runScatter2(t, p, m, 100)
		}, func() string { return runScatter2(t, nil, nil, 100) }},
		{"total", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			x, out, counts := ramp(n), make([]float32, 1), make([]int32, 4)
			check(t, launch(t, m, "total", x, out, counts))
			return fmt.Sprint(out, counts)
		}, func() string {
			x, out, counts := ramp(n), make([]float32, 1), make([]int32, 4)
			total(x, out, counts)
			return fmt.Sprint(out, counts)
		}},
		{"twoStreams", func(t *testing.T, p *qd.Program, m *qd.Module) string {
			a, b := make([]int32, n), make([]int32, n)
			for i := range a {
				a[i], b[i] = int32(i), int32(-i)
			}
			check(t, launch(t, m, "twoStreams", a, b))
			return fmt.Sprint(a, b)
		}, func() string {
			a, b := make([]int32, n), make([]int32, n)
			for i := range a {
				a[i], b[i] = int32(i), int32(-i)
			}
			twoStreams(a, b)
			return fmt.Sprint(a, b)
		}},
	}
	for _, c := range cases {
		want := c.ref()
		for _, path := range paths {
			t.Run(c.name+"/"+path.name, func(t *testing.T) {
				p, m := program(t, path.on)
				if got := c.run(t, p, m); got != want {
					t.Errorf("%s on the CPU (%s) differs from the plain Go call:\n got %.300s\nwant %.300s", c.name, path.name, got, want)
				}
			})
		}
	}
}

// runScatter runs the scatter kernel over n elements into bins, on m or,
// for nil, as plain Go. Its weights are small integers, so that the sums
// are exact in any order.
func runScatter(t *testing.T, m *qd.Module, n, bins int) string {
	idx, w := make([]int32, n), make([]float32, n)
	for i := range idx {
		idx[i] = int32(i * 7919 % bins)
		w[i] = float32(i % 5)
	}
	h, counts := make([]float32, bins), make([]int64, 4)
	if m == nil {
		scatter(idx, w, h, counts)
	} else {
		check(t, launch(t, m, "scatter", idx, w, h, counts))
	}
	return fmt.Sprint(h, counts)
}

// runScatter2 runs scatter2 over n indices into an 8×16 grid, on m or,
// for nil, as plain Go.
func runScatter2(t *testing.T, p *qd.Program, m *qd.Module, n int) string {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i * 7919 % 128)
	}
	if m == nil {
		grid := rows(8, 16, func(i, j int) float32 { return 0 })
		scatter2(idx, grid)
		return fmt.Sprint(grid)
	}
	grid := nd(t, p, rows(8, 16, func(i, j int) float32 { return 0 }))
	check(t, launch(t, m, "scatter2", idx, grid))
	return fmt.Sprint(rows(8, 16, func(i, j int) float32 { return read(t, grid)[i*16+j] }))
}

// TestNativeScatterIndexError: a scatter's index out of range is the
// kernel's error at its line, in a chunk with a private copy and in one
// without.
func TestNativeScatterIndexError(t *testing.T) {
	p, m := program(t, true)
	for _, n := range []int{1 << 16, 10} {
		idx := make([]int32, n)
		idx[n/2] = 64
		err := launch(t, m, "scatter", idx, make([]float32, n), make([]float32, 64), make([]int64, 4))
		if err == nil {
			t.Fatalf("n=%d: adding at bin 64 of 64 succeeded", n)
		}
		for _, want := range []string{"kernels.go:180", "kernel scatter", "index out of range [64] with length 64"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("n=%d: the error %q does not say %q", n, err, want)
			}
		}
		idx[n/2] = 8 * 16 // row 0, column 16 of 16
		err = launch(t, m, "scatter2", idx, nd(t, p, rows(8, 16, func(i, j int) float32 { return 0 })))
		if err == nil {
			t.Fatalf("n=%d: adding at column 16 of 16 succeeded", n)
		}
		for _, want := range []string{"kernels.go:191", "kernel scatter2", "index out of range [16] with length 16"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("n=%d: the error %q does not say %q", n, err, want)
			}
		}
	}
}

// TestNativeIndexError: an index out of range ends the launch with an
// error naming the kernel, its file and line, reported by Synchronize; the
// Program goes on working.
func TestNativeIndexError(t *testing.T) {
	p, m := program(t, true)
	x := make([]float32, 4)
	err := launch(t, m, "outOfRange", x, 5)
	if err == nil {
		t.Fatal("writing x[4] of 4 elements succeeded")
	}
	for _, want := range []string{"kernels.go:137", "kernel outOfRange", "index out of range [4] with length 4"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
	check(t, launch(t, m, "outOfRange", x, 4))
	if x[3] != 1 {
		t.Errorf("after the failed launch, a good one wrote %v", x)
	}
	_ = p
}

// TestNativeStop: a launch whose context ends stops inside the kernel's
// own loop, with the context's error.
func TestNativeStop(t *testing.T) {
	p, m := program(t, true)
	// spin's loop checks the stop flag every iteration; the others every
	// 1024th value of their counters.
	for _, name := range []string{"spin", "spinCounted", "spinRange"} {
		k, err := m.Kernel(name)
		check(t, err)
		s, err := p.NewStream()
		check(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err = k.LaunchContext(ctx, s, []int32{0}, []int32{0}) // with slices: waits
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the stopped launch of %s reported %v; want the context's deadline", name, err)
		}
		if !strings.Contains(err.Error(), "kernel "+name) {
			t.Errorf("the error %q does not name the kernel %s", err, name)
		}
	}
}

// TestShortHeavyLoopSplits: a parallel loop of 4 iterations whose first
// is heavy runs its others at once on two workers, on both paths, on its
// first launch and on a later one (a rendezvous: iteration 1 waits for
// iteration 3).
func TestShortHeavyLoopSplits(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two workers (GOMAXPROCS >= 2)")
	}
	for _, path := range paths {
		t.Run(path.name, func(t *testing.T) {
			_, m := program(t, path.on)
			// The first launch times its first iteration; the second
			// splits by the time per iteration the first measured.
			for run := range 2 {
				met := make([]float32, 2)
				check(t, launch(t, m, "meet", []int32{0}, met, 1<<22))
				if met[1] != 1 {
					t.Errorf("launch %d: iteration 1 never met iteration 3 (met %v): the short loop ran on one worker", run, met)
				}
			}
		})
	}
}

// TestNothingSkipped: qd gen covers every kernel of the file
// (internal/nativegen's TestGeneratedFilesCurrent checks that
// kernels_qdgen.go is current).
func TestNothingSkipped(t *testing.T) {
	res, err := nativegen.Generate("kernels.go", []byte(kernelSrc))
	check(t, err)
	if len(res.Skipped) > 0 {
		t.Errorf("kernels left to the closures: %v", res.Skipped)
	}
}

func ramp(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%97) * 0.25
	}
	return x
}

func ones(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = 1
	}
	return x
}

func bytesOf(n int) []uint8 {
	d := make([]uint8, n)
	for i := range d {
		d[i] = uint8(i * 7919 >> 3)
	}
	return d
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
