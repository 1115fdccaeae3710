package qd

import (
	"bytes"
	"math"
	"os"
	"sync"
	"testing"
)

// TestKernelAPICopy fails when the front end's embedded copy of this
// package's kernel API differs from kernelapi.go: the front end type-checks
// kernels against the copy. Run go generate ./internal/frontend to refresh it.
func TestKernelAPICopy(t *testing.T) {
	orig, err := os.ReadFile("kernelapi.go")
	if err != nil {
		t.Fatal(err)
	}
	cp, err := os.ReadFile("internal/frontend/qdapi.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(orig, cp) {
		t.Fatal("internal/frontend/qdapi.go.txt differs from kernelapi.go; run go generate ./internal/frontend")
	}
}

// TestLibraryCopies fails when one of the front end's embedded copies of
// the value library differs from its file here: the front end type-checks
// and inlines the copies' bodies, so a stale copy would compile kernels
// that disagree with the native run. Run go generate ./internal/frontend to
// refresh them.
func TestLibraryCopies(t *testing.T) {
	for _, name := range []string{"vec.go", "mat.go", "quat.go", "decomp.go", "rand.go", "blockapi.go"} {
		orig, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := os.ReadFile("internal/frontend/" + name + ".txt")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(orig, cp) {
			t.Errorf("internal/frontend/%s.txt differs from %s; run go generate ./internal/frontend", name, name)
		}
	}
}

// hammer runs f from many goroutines at once.
func hammer(n int, f func()) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				f()
			}
		}()
	}
	wg.Wait()
}

func TestKernelAPIAtomicsConcurrent(t *testing.T) {
	var i32 int32
	var i64 int64
	var u32 uint32
	var u uint
	var f32 float32
	var f64 float64
	hammer(1000, func() {
		AtomicAdd(&i32, 1)
		AtomicAdd(&i64, 2)
		AtomicAdd(&u32, 3)
		AtomicAdd(&u, 4)
		AtomicAdd(&f32, 1)
		AtomicSub(&f64, 0.5)
	})
	if i32 != 8000 || i64 != 16000 || u32 != 24000 || u != 32000 || f32 != 8000 || f64 != -4000 {
		t.Fatalf("sums: %d %d %d %d %v %v", i32, i64, u32, u, f32, f64)
	}
	var mx, mn int64 = 0, 1 << 40
	var k int64
	hammer(500, func() {
		v := AtomicAdd(&k, 1)
		AtomicMax(&mx, v)
		AtomicMin(&mn, v)
	})
	if mx != 3999 || mn != 0 {
		t.Fatalf("max %d min %d", mx, mn)
	}
}

func TestKernelAPIAtomicsOldValue(t *testing.T) {
	x := []int32{5, 0b1100, 0b1100, 0b1100, 9}
	if old := AtomicSub(&x[0], 2); old != 5 || x[0] != 3 {
		t.Errorf("sub: old %d new %d", old, x[0])
	}
	if old := AtomicAnd(&x[1], 0b1010); old != 0b1100 || x[1] != 0b1000 {
		t.Errorf("and: old %d new %d", old, x[1])
	}
	if old := AtomicOr(&x[2], 0b0011); old != 0b1100 || x[2] != 0b1111 {
		t.Errorf("or: old %d new %d", old, x[2])
	}
	if old := AtomicXor(&x[3], 0b0110); old != 0b1100 || x[3] != 0b1010 {
		t.Errorf("xor: old %d new %d", old, x[3])
	}
	if old := AtomicExchange(&x[4], 1); old != 9 || x[4] != 1 {
		t.Errorf("exchange: old %d new %d", old, x[4])
	}
	if old := AtomicCAS(&x[4], 2, 7); old != 1 || x[4] != 1 {
		t.Errorf("failed cas: old %d new %d", old, x[4])
	}
	if old := AtomicCAS(&x[4], 1, 7); old != 1 || x[4] != 7 {
		t.Errorf("cas: old %d new %d", old, x[4])
	}
	f := []float64{math.NaN(), 2}
	if old := AtomicCAS(&f[0], f[0], 1); !math.IsNaN(old) || f[0] != 1 {
		t.Errorf("cas on NaN bits: old %v new %v", old, f[0])
	}
	if old := AtomicMin(&f[1], -3); old != 2 || f[1] != -3 {
		t.Errorf("float min: old %v new %v", old, f[1])
	}
	u := []uint64{math.MaxUint64}
	if old := AtomicAdd(&u[0], 1); old != math.MaxUint64 || u[0] != 0 {
		t.Errorf("wrapping add: old %v new %v", old, u[0])
	}
}

func TestKernelAPIMath(t *testing.T) {
	if got := Sqrt(float32(2)); got != float32(math.Sqrt(2)) {
		t.Errorf("Sqrt f32 = %v", got)
	}
	if got := Pow(2.0, 10); got != 1024 {
		t.Errorf("Pow = %v", got)
	}
	if got := Round(float32(-2.5)); got != -3 {
		t.Errorf("Round = %v", got)
	}
	if got := Mod(7.5, 2); got != 1.5 {
		t.Errorf("Mod = %v", got)
	}
	if got := Atan2(float32(1), 1); got != float32(math.Pi/4) {
		t.Errorf("Atan2 = %v", got)
	}
	checks := map[string][2]float64{
		"Exp": {Exp(1.0), math.E}, "Exp2": {Exp2(3.0), 8}, "Log": {Log(math.E), 1}, "Log2": {Log2(8.0), 3},
		"Log10": {Log10(100.0), 2}, "Sin": {Sin(0.0), 0}, "Cos": {Cos(0.0), 1}, "Tan": {Tan(0.0), 0},
		"Asin": {Asin(1.0), math.Pi / 2}, "Acos": {Acos(1.0), 0}, "Atan": {Atan(0.0), 0},
		"Sinh": {Sinh(0.0), 0}, "Cosh": {Cosh(0.0), 1}, "Tanh": {Tanh(0.0), 0}, "Abs": {Abs(-2.0), 2},
		"Floor": {Floor(1.5), 1}, "Ceil": {Ceil(1.5), 2}, "Trunc": {Trunc(-1.5), -1}, "Hypot": {Hypot(3.0, 4), 5},
	}
	for name, c := range checks {
		if math.Abs(c[0]-c[1]) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, c[0], c[1])
		}
	}
}

func TestKernelAPIRanges(t *testing.T) {
	var got [][2]int
	for i, j := range NDRange(2, 3) {
		got = append(got, [2]int{i, j})
	}
	if len(got) != 6 || got[0] != [2]int{0, 0} || got[5] != [2]int{1, 2} || got[3] != [2]int{1, 0} {
		t.Errorf("NDRange order: %v", got)
	}
	n := 0
	for p := range NDRange3(2, 3, 4) {
		if p.I*12+p.J*4+p.K != n {
			t.Fatalf("NDRange3 point %d is %v", n, p)
		}
		n++
	}
	if n != 24 {
		t.Errorf("NDRange3 yielded %d points", n)
	}
	for range NDRange(5, 5) {
		break // early exit must not panic
	}
	for range NDRange3(2, 2, 2) {
		break
	}
	ran := false
	StreamParallel(func() { ran = true })
	LoopConfig(BlockDim(64))
	if !ran {
		t.Error("StreamParallel did not run its body")
	}
}
