package wasmproto

import (
	"context"
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

const pages = 1024 // 64 MiB

// env is one runtime: a shared memory and one instance of the kernels'
// module per worker, all importing it.
type env struct {
	r    wazero.Runtime
	mem  []byte
	inst []api.Module
}

// setup compiles the kernels with wazero's optimising compiler and
// instantiates them for workers workers.
func setup(t testing.TB, workers int) *env {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCoreFeatures(api.CoreFeaturesV2|experimental.CoreFeaturesThreads))
	memMod, err := r.InstantiateWithConfig(ctx, memModule(pages), wazero.NewModuleConfig().WithName("env"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := r.CompileModule(ctx, module(pages, saxpyFn(), heatFn(), stencil5Fn(), heatHoistedFn()))
	if err != nil {
		t.Fatal(err)
	}
	e := &env{r: r}
	for w := range workers {
		inst, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("k"+string(rune('0'+w))))
		if err != nil {
			t.Fatal(err)
		}
		e.inst = append(e.inst, inst)
	}
	buf, ok := memMod.Memory().Read(0, pages*65536)
	if !ok {
		t.Fatal("read")
	}
	e.mem = buf
	return e
}

// f32 views n float32 of the shared memory from byte off.
func (e *env) f32(off, n int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(&e.mem[off])), n)
}

// inputs fills s with values in [0, 1), as the benchsuite's CPU rows do.
func inputs(s []float32) {
	for i := range s {
		s[i] = float32(math.Mod(float64(i)*0.6180339887498949, 1))
	}
}

// heatAt, heatPlain, stencil5Plain and saxpyPlain are the plain-Go
// references: copies of internal/benchsuite's, which this module, kept
// apart so that qd does not depend on wazero, cannot import.
func heatAt(in [][]float32, i, j int, alpha float32) float32 {
	c := in[i][j]
	if i == 0 || j == 0 || i == len(in)-1 || j == len(in[0])-1 {
		return c
	}
	return c + alpha*((in[i-1][j]+in[i+1][j])+(in[i][j-1]+in[i][j+1])-4*c)
}

func heatPlain(in, out [][]float32, alpha float32) {
	for i := range in {
		for j := range in[i] {
			out[i][j] = heatAt(in, i, j, alpha)
		}
	}
}

func stencil5Plain(in, out [][]float32) {
	for i := 1; i < len(in)-1; i++ {
		for j := 1; j < len(in[i])-1; j++ {
			out[i][j] = 0.5*in[i][j] + 0.125*((in[i-1][j]+in[i+1][j])+(in[i][j-1]+in[i][j+1]))
		}
	}
}

//go:noinline
func saxpyPlain(a float32, x, y []float32) {
	for i := range len(y) {
		y[i] = a*x[i] + y[i]
	}
}

// rows views flat as rows of m.
func rows(flat []float32, m int) [][]float32 {
	r := make([][]float32, len(flat)/m)
	for i := range r {
		r[i] = flat[i*m : (i+1)*m : (i+1)*m]
	}
	return r
}

// call calls f and fails on a trap or an index-error code.
func call(b testing.TB, f api.Function, args ...uint64) {
	res, err := f.Call(context.Background(), args...)
	if err != nil || res[0] != 0 {
		b.Fatal(err, res)
	}
}

func f32bits(v float32) uint64 { return uint64(math.Float32bits(v)) }

// parallel splits rows [0, rows) into chunks over the instances.
func (e *env) parallel(b testing.TB, name string, rows int, args func(lo, hi int) []uint64) {
	if len(e.inst) == 1 {
		call(b, e.inst[0].ExportedFunction(name), args(0, rows)...)
		return
	}
	var wg sync.WaitGroup
	per := (rows + len(e.inst) - 1) / len(e.inst)
	for w, in := range e.inst {
		lo, hi := w*per, min((w+1)*per, rows)
		wg.Add(1)
		go func() { defer wg.Done(); call(b, in.ExportedFunction(name), args(lo, hi)...) }()
	}
	wg.Wait()
}

// TestSame: the lowered kernels give plain Go's results bit for bit, and
// an index out of range is an error code, not a crash.
func TestSame(t *testing.T) {
	e := setup(t, 2)
	const n, m = 256, 256
	in, out := e.f32(0, n*m), e.f32(4*n*m, n*m)
	inputs(in)
	e.parallel(t, "heat", n, func(lo, hi int) []uint64 {
		return []uint64{0, 4 * n * m, n, m, f32bits(0.2), uint64(lo), uint64(hi)}
	})
	want := make([]float32, n*m)
	heatPlain(rows(in, m), rows(want, m), 0.2)
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(out[i]) {
			t.Fatalf("heat %d: %v vs %v", i, out[i], want[i])
		}
	}
	clear(out)
	e.parallel(t, "heatH", n, func(lo, hi int) []uint64 {
		return []uint64{0, 4 * n * m, n, m, f32bits(0.2), uint64(lo), uint64(hi)}
	})
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(out[i]) {
			t.Fatalf("heat, hoisted %d: %v vs %v", i, out[i], want[i])
		}
	}
	clear(out)
	e.parallel(t, "stencil5", n-2, func(lo, hi int) []uint64 {
		return []uint64{0, 4 * n * m, n, m, uint64(lo), uint64(hi)}
	})
	clear(want)
	stencil5Plain(rows(in, m), rows(want, m))
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(out[i]) {
			t.Fatalf("stencil %d: %v vs %v", i, out[i], want[i])
		}
	}
	// an out-of-range index is an error code, not a crash
	res, err := e.inst[0].ExportedFunction("heat").Call(context.Background(), 0, 4*n*m, n, m, f32bits(0.2), 0, n+1)
	if err != nil || res[0] != errIndex {
		t.Fatal(err, res)
	}
}

// benchWasm times fn over rows [0, rows) split among workers, the inputs
// at byte 0 (and, for saxpy, at its second array); elements is what the
// time is divided by.
func benchWasm(b *testing.B, fn string, workers, rows, elements int, args func(lo, hi int) []uint64) {
	e := setup(b, workers)
	inputs(e.f32(0, elements))
	inputs(e.f32(4*elements, elements))
	for b.Loop() {
		e.parallel(b, fn, rows, args)
	}
	perElement(b, elements)
}

// benchGo times the plain-Go reference f.
func benchGo(b *testing.B, elements int, f func()) {
	for b.Loop() {
		f()
	}
	perElement(b, elements)
}

func perElement(b *testing.B, n int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/element")
}

const heatN, stencilN, saxpyN = 256, 1024, 1 << 20

func heatArgs(lo, hi int) []uint64 {
	const n = heatN
	return []uint64{0, 4 * n * n, n, n, f32bits(0.2), uint64(lo), uint64(hi)}
}

func stencilArgs(lo, hi int) []uint64 {
	const n = stencilN
	return []uint64{0, 4 * n * n, n, n, uint64(lo), uint64(hi)}
}

func saxpyArgs(lo, hi int) []uint64 {
	return []uint64{f32bits(2), 0, 4 * saxpyN, saxpyN, saxpyN, uint64(lo), uint64(hi)}
}

func BenchmarkHeatWasm1(b *testing.B) { benchWasm(b, "heat", 1, heatN, heatN*heatN, heatArgs) }
func BenchmarkHeatWasm2(b *testing.B) { benchWasm(b, "heat", 2, heatN, heatN*heatN, heatArgs) }
func BenchmarkHeatWasmHoisted1(b *testing.B) {
	benchWasm(b, "heatH", 1, heatN, heatN*heatN, heatArgs)
}
func BenchmarkHeatWasmHoisted2(b *testing.B) {
	benchWasm(b, "heatH", 2, heatN, heatN*heatN, heatArgs)
}
func BenchmarkHeatGo(b *testing.B) {
	in, out := make([]float32, heatN*heatN), make([]float32, heatN*heatN)
	inputs(in)
	ri, ro := rows(in, heatN), rows(out, heatN)
	benchGo(b, heatN*heatN, func() { heatPlain(ri, ro, 0.2) })
}

func BenchmarkStencilWasm1(b *testing.B) {
	benchWasm(b, "stencil5", 1, stencilN-2, stencilN*stencilN, stencilArgs)
}
func BenchmarkStencilWasm2(b *testing.B) {
	benchWasm(b, "stencil5", 2, stencilN-2, stencilN*stencilN, stencilArgs)
}
func BenchmarkStencilGo(b *testing.B) {
	in, out := make([]float32, stencilN*stencilN), make([]float32, stencilN*stencilN)
	inputs(in)
	ri, ro := rows(in, stencilN), rows(out, stencilN)
	benchGo(b, stencilN*stencilN, func() { stencil5Plain(ri, ro) })
}

func BenchmarkSaxpyWasm1(b *testing.B) { benchWasm(b, "saxpy", 1, saxpyN, saxpyN, saxpyArgs) }
func BenchmarkSaxpyWasm2(b *testing.B) { benchWasm(b, "saxpy", 2, saxpyN, saxpyN, saxpyArgs) }
func BenchmarkSaxpyGo(b *testing.B) {
	x, y := make([]float32, saxpyN), make([]float32, saxpyN)
	inputs(x)
	inputs(y)
	benchGo(b, saxpyN, func() { saxpyPlain(2, x, y) })
}
