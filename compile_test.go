package qd

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/quadrants-go/qd/internal/frontend"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// Tests of Compile and Module. The kernels' behaviour on every construct is
// in internal/difftest; here: the API around it, the caches and the errors.

const compileSrc = `package kernels

import "github.com/quadrants-go/qd"

//qd:kernel
func fill(x []float32, v float32) {
	for i := range len(x) {
		x[i] = v
	}
}

// not a kernel: no marker
func twice(v float32) float32 { return 2 * v }

//qd:kernel
func scale(x []float32, a float32) {
	for i := range len(x) {
		x[i] = twice(a) * x[i]
	}
}

//qd:kernel
func count(x []int32, n []int64) {
	for i := range len(x) {
		if x[i] > 0 {
			qd.AtomicAdd(&n[0], 1)
		}
	}
}
`

func TestCompileModule(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, compileSrc, WithFilename("k.go"))
		if got, want := m.Kernels(), []string{"fill", "scale", "count"}; !slicesEqual(got, want) {
			t.Fatalf("Kernels() = %v, want %v (source order, markers only)", got, want)
		}
		// Kernels returns a copy: the caller may not change the module.
		m.Kernels()[0] = "changed"
		if m.Kernels()[0] != "fill" {
			t.Error("Kernels() shares its slice with the module")
		}
		fill := kernelOf(t, m, "fill")
		scale := kernelOf(t, m, "scale")
		if fill.Name() != "fill" {
			t.Errorf("Name() = %q", fill.Name())
		}
		x := newNdarray[float32](t, p, 300)
		check(t, fill.Launch(x, float32(3)))
		check(t, scale.Launch(x, float32(5)))
		allEqual(t, "x", toSlice(t, x), 30)

		// Slices work as well, and []byte sources.
		mb := compileModule(t, p, []byte(compileSrc), WithFilename("k.go"))
		cnt := kernelOf(t, mb, "count")
		n := []int64{0}
		check(t, cnt.Launch([]int32{1, -1, 2, 0, 5}, n))
		if n[0] != 3 {
			t.Errorf("count = %d, want 3", n[0])
		}

		_, err := m.Kernel("missing")
		wantErr(t, err, ErrInvalidArgument)
		if !strings.Contains(err.Error(), `"missing"`) || !strings.Contains(err.Error(), "fill") {
			t.Errorf("unknown kernel error %q should name the kernel and list the module's", err)
		}
		_, err = m.Kernel("twice") // a helper is no kernel
		wantErr(t, err, ErrInvalidArgument)

		check(t, m.Close())
		check(t, m.Close()) // idempotent
		wantErr(t, fill.Launch(x, float32(1)), ErrClosed)
		// The other module's kernels are independent of the closed one.
		check(t, cnt.Launch([]int32{1}, n))
		check(t, mb.Close())
	})
}

func TestCompileNilAndClosed(t *testing.T) {
	_, err := Compile[string](nil, compileSrc)
	wantErr(t, err, ErrInvalidArgument)

	var m *Module
	_, err = m.Kernel("fill")
	wantErr(t, err, ErrInvalidArgument)
	if m.Kernels() != nil || m.Close() != nil {
		t.Error("a nil Module has kernels or fails to close")
	}

	p := initProgram(t, WithArch(CPU))
	mod := compileModule(t, p, compileSrc)
	k := kernelOf(t, mod, "fill")
	check(t, p.Close())
	_, err = Compile(p, compileSrc)
	wantErr(t, err, ErrClosed)
	wantErr(t, k.Launch([]float32{1}, float32(1)), ErrClosed)
	check(t, mod.Close()) // after the Program: fine
}

// TestKernelHandles: every Module.Kernel call returns its own handle to
// the shared compiled kernel, so one handle's Close leaves the others
// working; Module.Kernel after Module.Close or Program.Close is ErrClosed.
func TestKernelHandles(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		m := compileModule(t, p, compileSrc)
		k1 := kernelOf(t, m, "fill")
		k2 := kernelOf(t, m, "fill")
		if k1 == k2 {
			t.Fatal("two Kernel calls returned one handle: closing one would close both")
		}
		x := []float32{0, 0}
		check(t, k1.Close())
		check(t, k1.Close()) // idempotent
		wantErr(t, k1.Launch(x, float32(1)), ErrClosed)
		check(t, k2.Launch(x, float32(2)))
		k3 := kernelOf(t, m, "fill")
		check(t, k3.Launch(x, float32(3)))
		if x[0] != 3 {
			t.Fatalf("x = %v after fill(3)", x)
		}
		check(t, m.Close())
		_, err := m.Kernel("fill")
		wantErr(t, err, ErrClosed)
		wantErr(t, k2.Launch(x, float32(4)), ErrClosed)

		m2 := compileModule(t, p, compileSrc)
		built := build(t, p, suitekernels.Fill(ir.F32))
		check(t, built.Close())
		wantErr(t, built.Launch(x, float32(5)), ErrClosed)
		check(t, p.Close())
		_, err = m2.Kernel("fill")
		wantErr(t, err, ErrClosed)
	})
}

// TestCompileCaches: the same source is parsed once per process (the
// source cache holds the lowered plans, shared by every Program), and the
// kernels of two Compiles on one Program share one backend module, which is
// unloaded when the last of them closes.
func TestCompileCaches(t *testing.T) {
	src := compileSrc + "\n// TestCompileCaches\n" // a source no other test compiles
	plans := func(name string) []*lower.Plan {
		t.Helper()
		ps, _, err := parseCached(name, []byte(src))
		check(t, err)
		return ps
	}
	a, b := plans("c.go"), plans("c.go")
	if len(a) != 3 || a[0] != b[0] {
		t.Fatal("parsing the same source twice did not hit the source cache")
	}
	// The file name is part of the key: it is in every error position.
	c := plans("other.go")
	if c[0] == a[0] {
		t.Error("a different file name hit the same cache entry")
	}

	forEachArch(t, func(t *testing.T, p *Program) {
		m1 := compileModule(t, p, src, WithFilename("c.go"))
		m2 := compileModule(t, p, src, WithFilename("c.go"))
		k1 := kernelOf(t, m1, "scale")
		k2 := kernelOf(t, m2, "scale")
		if k1 == k2 {
			t.Fatal("two Compiles returned the same *Kernel: closing one module would close the other's")
		}
		if k1.c.plan != k2.c.plan || k1.c.mod != k2.c.mod {
			t.Error("two Compiles of one source on one Program do not share the plan and the backend module")
		}
		modules := func() int { // the Program's own fill kernels left out
			p.modules.mu.Lock()
			defer p.modules.mu.Unlock()
			return len(p.modules.m) - p.fills.loaded()
		}
		if modules() != 3 {
			t.Fatalf("%d backend modules for the 3 kernels of two Compiles, want 3", modules())
		}
		check(t, m1.Close())
		if modules() != 3 {
			t.Error("closing one of two modules unloaded the shared backend module")
		}
		x := newNdarray[float32](t, p, 10)
		check(t, k2.Launch(x, float32(1))) // still usable
		check(t, m2.Close())
		if modules() != 3 {
			t.Errorf("after closing both modules %d backend modules remain, want 3: the cache keeps them until the Program closes", modules())
		}
	})
}

// posRE matches an error position: file:line:col.
var posRE = regexp.MustCompile(`^([^:\s]+):(\d+):(\d+): `)

// TestCompileErrors: each bad source is an error positioned in the file
// named by WithFilename, found by errors.As as an *ir.Error, with a message
// that says what is wrong; and the Program stays usable.
func TestCompileErrors(t *testing.T) {
	const head = "package k\n\nimport \"github.com/quadrants-go/qd\"\n\nvar _ = qd.Sqrt[float32]\n\n"
	cases := []struct {
		name, src string
		line, col int
		want      string
	}{
		{"syntax", "//qd:kernel\nfunc k(x []int32) {\n\tfor i := range len(x) {\n\t\tx[i] = \n\t}\n}\n", 11, 2, "expected operand"},
		{"type error", "//qd:kernel\nfunc k(x []int32) {\n\tfor i := range len(x) {\n\t\tx[i] = 1.5\n\t}\n}\n", 10, 10, "truncated"},
		{"goroutine", "//qd:kernel\nfunc k(x []int32) {\n\tfor i := range len(x) {\n\t\tgo f()\n\t\tx[i] = 1\n\t}\n}\n\nfunc f() {}\n", 10, 3, "go"},
		{"map", "//qd:kernel\nfunc k(x []int32) {\n\tfor i := range len(x) {\n\t\tm := map[int]int{}\n\t\tx[i] = int32(len(m))\n\t}\n}\n", 10, 3, "maps are not supported"},
		{"stream parallel mixed", "//qd:kernel\nfunc k(x []int32) {\n\tqd.StreamParallel(func() {\n\t\tfor i := range len(x) {\n\t\t\tx[i] = 1\n\t\t}\n\t})\n\tfor i := range len(x) {\n\t\tx[i] = 2\n\t}\n}\n", 0, 0, "StreamParallel"},
		{"stream parallel nested", "//qd:kernel\nfunc k(x []int32) {\n\tqd.StreamParallel(func() {\n\t\tqd.StreamParallel(func() {\n\t\t\tfor i := range len(x) {\n\t\t\t\tx[i] = 1\n\t\t\t}\n\t\t})\n\t})\n}\n", 10, 3, "nest"},
		{"break out of parallel loop", "//qd:kernel\nfunc k(x []int32) {\n\tfor i := range len(x) {\n\t\tif i > 2 {\n\t\t\tbreak\n\t\t}\n\t\tx[i] = 1\n\t}\n}\n", 11, 4, "break"},
		{"unsupported math", "//qd:kernel\nfunc k(x []float64) {\n\tfor i := range len(x) {\n\t\tx[i] = math.Gamma(x[i])\n\t}\n}\n", 0, 0, "Gamma"},
	}
	forEachArch(t, func(t *testing.T, p *Program) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				src := head + c.src
				if strings.Contains(c.src, "math.") {
					src = strings.Replace(src, "import \"github.com/quadrants-go/qd\"", "import (\n\t\"math\"\n\n\t\"github.com/quadrants-go/qd\"\n)", 1)
				}
				for range 2 { // a failed source is not cached as a success
					_, err := Compile(p, src, WithFilename("bad_kernels.go"))
					if err == nil {
						t.Fatal("Compile accepted the source")
					}
					var ie *ir.Error
					if !errors.As(err, &ie) {
						t.Fatalf("errors.As(*ir.Error) fails on %T: %v", err, err)
					}
					var el frontend.ErrorList
					if errors.As(err, &el) && (len(el) == 0 || el[0] != ie) {
						t.Errorf("errors.As finds %v, not the first of the list", ie)
					}
					if ie.Pos.File != "bad_kernels.go" {
						t.Errorf("position file %q, want bad_kernels.go", ie.Pos.File)
					}
					msg := err.Error()
					mm := posRE.FindStringSubmatch(msg)
					if mm == nil || mm[1] != "bad_kernels.go" {
						t.Fatalf("error %q does not start with bad_kernels.go:line:col", msg)
					}
					if c.line != 0 && (mm[2] != fmt.Sprint(c.line) || mm[3] != fmt.Sprint(c.col)) {
						t.Errorf("error at %s:%s, want %d:%d: %s", mm[2], mm[3], c.line, c.col, msg)
					}
					if !strings.Contains(msg, c.want) {
						t.Errorf("error %q does not mention %q", msg, c.want)
					}
				}
			})
		}
		// The default file name, when WithFilename is not given.
		_, err := Compile(p, head+cases[0].src)
		if err == nil || !strings.HasPrefix(err.Error(), "kernels.go:") {
			t.Errorf("without WithFilename the error is %v, want a kernels.go: position", err)
		}
		// The Program is unharmed.
		m := compileModule(t, p, compileSrc)
		check(t, kernelOf(t, m, "fill").Launch([]float32{0}, float32(1)))
	})
}

// TestCompileConcurrent compiles from many goroutines at once on one
// Program, the same source and sources of their own (run with -race), and
// launches what each got.
func TestCompileConcurrent(t *testing.T) {
	forEachArch(t, func(t *testing.T, p *Program) {
		const G = 16
		var wg sync.WaitGroup
		errs := make(chan error, G)
		for g := range G {
			wg.Go(func() {
				errs <- func() error {
					src := compileSrc
					if g%2 == 1 {
						src += fmt.Sprintf("\n// goroutine %d\n", g) // a cache miss
					}
					m, err := Compile(p, src, WithFilename("conc.go"))
					if err != nil {
						return err
					}
					defer m.Close()
					k, err := m.Kernel("fill")
					if err != nil {
						return err
					}
					x := make([]float32, 100+g)
					if err := k.Launch(x, float32(g)); err != nil {
						return err
					}
					for i, v := range x {
						if v != float32(g) {
							return fmt.Errorf("goroutine %d: x[%d] = %v", g, i, v)
						}
					}
					return nil
				}()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

func slicesEqual(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

// TestSourceCacheBounded compiles many distinct one-kernel sources, each in
// a fresh Program that is closed at once, as a process generating kernels
// would: the process-wide source cache must level off at its bound, not
// grow with every source, and keep the most recent source.
func TestSourceCacheBounded(t *testing.T) {
	const rounds = maxSources + 100
	src := func(i int) string {
		return fmt.Sprintf("package k\n\n//qd:kernel\nfunc k%d(x []int32) {\n\tfor i := range x {\n\t\tx[i] = %d\n\t}\n}\n", i, i)
	}
	for i := range rounds {
		p := initProgram(t, WithArch(CPU))
		m := compileModule(t, p, src(i), WithFilename("bounded.go"))
		check(t, m.Close())
		check(t, p.Close())
		if n := sourceCacheLen(); n > maxSources {
			t.Fatalf("after %d distinct sources the cache holds %d entries, more than its bound %d", i+1, n, maxSources)
		}
	}
	last, _, err := parseCached("bounded.go", []byte(src(rounds-1)))
	check(t, err)
	again, _, err := parseCached("bounded.go", []byte(src(rounds-1)))
	check(t, err)
	if last[0] != again[0] {
		t.Error("the most recent source is no longer cached")
	}
}

func sourceCacheLen() int { return sourceCache.len() }

// TestPlanCacheBytes: the byte bound evicts the oldest entries too, but
// never the entry just added.
func TestPlanCacheBytes(t *testing.T) {
	c := planCache{maxEntries: 10, maxBytes: 100}
	key := func(i byte) [32]byte { return [32]byte{i} }
	for i := range byte(5) {
		c.put(key(i), planEntry{}, 40)
	}
	if c.len() != 2 || c.bytes != 80 {
		t.Fatalf("%d entries of %d bytes, want the 2 newest (80 bytes)", c.len(), c.bytes)
	}
	if _, ok := c.get(key(3)); !ok {
		t.Fatal("entry 3 evicted")
	}
	c.put(key(9), planEntry{}, 500) // larger than the bound alone
	if _, ok := c.get(key(9)); !ok || c.len() != 1 {
		t.Fatalf("an oversized entry: %d entries, want just it", c.len())
	}
}
