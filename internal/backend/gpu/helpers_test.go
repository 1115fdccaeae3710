package gpu_test

import (
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/cuda"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
	"github.com/quadrants-go/qd/internal/backend/gpu/gputest"
	"github.com/quadrants-go/qd/internal/backend/hip"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// drivers are the drivers the runtime's tests run against, each on its
// device 0: one corpus for every vendor, as wazero runs one spec corpus
// against every engine. The fake driver simulates a device on the host, so
// the corpus runs everywhere; it runs no kernels (see runsKernels).
var drivers = []struct {
	name string
	get  func() (gpu.Driver, error)
}{
	{"cuda", cuda.Driver},
	{"amdgpu", hip.Driver},
	{"fake", fakeDriver},
}

// fakeDriver is the process's shared fake driver as a gpu.Driver.
func fakeDriver() (gpu.Driver, error) {
	d, err := fakedriver.Default()
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return d, nil
}

// runsKernels reports whether drv runs kernels: every real driver does;
// the fake says it does not.
func runsKernels(drv gpu.Driver) bool {
	k, ok := drv.(interface{ RunsKernels() bool })
	return !ok || k.RunsKernels()
}

// needKernels skips t where d's kernels do not run (the fake driver): the
// test checks what kernels compute, or proves a rendezvous between them.
func needKernels(t *testing.T, d *gpu.Device) {
	t.Helper()
	if !runsKernels(d.Driver()) {
		t.Skipf("the %s driver runs no kernels: this test checks what kernels compute", d.Arch())
	}
}

// computes reports whether d's kernels run, so that a test that checks
// more than kernel results checks those only where they exist; where they
// do not it says so in the test's log.
func computes(t *testing.T, d *gpu.Device) bool {
	t.Helper()
	if runsKernels(d.Driver()) {
		return true
	}
	t.Logf("the %s driver runs no kernels: kernel results are not checked", d.Arch())
	return false
}

// forEachDriver runs f as a subtest per driver on a device opened for it
// (and closed after it). A driver without a device skips its subtest with
// the reason; under QD_GPU_RUN=1 at least one real driver must run. On the
// fake driver the subtest also fails if, once the device is closed, any
// stream, event, module or allocation is left, or the runtime made a call
// the fake rejects as a misuse.
func forEachDriver(t *testing.T, f func(t *testing.T, d *gpu.Device)) {
	t.Helper()
	real := 0
	var why []string
	for _, dc := range drivers {
		drv, err := dc.get()
		if err != nil {
			why = append(why, dc.name+": "+err.Error())
			t.Run(dc.name, func(t *testing.T) { t.Skipf("no %s device: %v", dc.name, err) })
			continue
		}
		if runsKernels(drv) {
			real++
		}
		t.Run(dc.name, func(t *testing.T) {
			if fake, ok := drv.(*fakedriver.Driver); ok {
				checkFake(t, fake) // registered first: runs after the device closes
			}
			f(t, gputest.Open(t, drv))
		})
	}
	if real == 0 && gputest.Required() {
		t.Fatalf("QD_GPU_RUN=1 but no GPU driver works: %v", why)
	}
}

// checkFake makes t fail if, when it ends, fake holds more than it held
// at the start or rejected a call as a misuse meanwhile.
func checkFake(t *testing.T, fake *fakedriver.Driver) {
	live, misuses := fake.Live(), len(fake.Misuses())
	t.Cleanup(func() {
		if now := fake.Live(); now != live {
			t.Errorf("the fake driver holds %v after the test, %v before", now, live)
		}
		for _, m := range fake.Misuses()[misuses:] {
			t.Errorf("misuse of the fake driver: %s", m)
		}
	})
}

// forEachDriverB is forEachDriver for benchmarks.
func forEachDriverB(b *testing.B, f func(b *testing.B, d *gpu.Device)) {
	ran := 0
	for _, dc := range drivers {
		drv, err := dc.get()
		if err != nil || !runsKernels(drv) {
			continue // the fake's costs are its callbacks', not a GPU's
		}
		ran++
		b.Run(dc.name, func(b *testing.B) { f(b, gputest.Open(b, drv)) })
	}
	if ran == 0 {
		if gputest.Required() {
			b.Fatal("QD_GPU_RUN=1 but no GPU driver works")
		}
		b.Skip("no GPU driver")
	}
}

// kernel is a compiled test kernel: its module and its number of tasks.
type kernel struct {
	backend.Module
	tasks int
}

// build lowers k and compiles it on d, unloading it when the test ends.
func build(t testing.TB, d *gpu.Device, k *ir.Kernel) *kernel {
	t.Helper()
	plan := mustLower(t, k)
	m, err := d.Compile(plan, backend.CompileOptions{})
	if err != nil {
		t.Fatalf("compile %s: %v", k.Name, err)
	}
	t.Cleanup(func() { m.Close() })
	return &kernel{m, len(plan.Tasks)}
}

// mustLower lowers k for t.
func mustLower(t testing.TB, k *ir.Kernel) *lower.Plan {
	t.Helper()
	plan, err := lower.Lower(k)
	if err != nil {
		t.Fatalf("lower %s: %v", k.Name, err)
	}
	return plan
}

// launch runs every task of k on s, as package qd does for a kernel
// without groups.
func launch(t testing.TB, k *kernel, s backend.Stream, args *backend.Args) {
	t.Helper()
	if err := k.launch(s, args); err != nil {
		t.Fatalf("launch: %v", err)
	}
}

func (k *kernel) launch(s backend.Stream, args *backend.Args) error {
	l, err := k.Begin(s, args)
	if err != nil {
		return err
	}
	for task := range k.tasks {
		if err = l.Run(task, s); err != nil {
			break
		}
	}
	if endErr := l.End(s); err == nil {
		err = endErr
	}
	return err
}

func arr(b backend.Buffer, n int) backend.ArrayArg {
	return backend.ArrayArg{Buf: b, Shape: [4]int{n, 1, 1, 1}}
}

func mustStream(t testing.TB, d *gpu.Device, prio int) backend.Stream {
	t.Helper()
	s, err := d.NewStream(prio)
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustAlloc(t testing.TB, d *gpu.Device, bytes int) backend.Buffer {
	t.Helper()
	b, err := d.Alloc(bytes)
	if err != nil {
		t.Fatalf("Alloc(%d): %v", bytes, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func readU32(t testing.TB, b backend.Buffer, s backend.Stream, n int) []uint32 {
	t.Helper()
	out := make([]uint32, n)
	if err := b.CopyToHost(s, unsafe.Pointer(&out[0]), 4*n); err != nil {
		t.Fatalf("CopyToHost: %v", err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("Synchronize: %v", err)
	}
	return out
}

func writeU32(t testing.TB, b backend.Buffer, s backend.Stream, v []uint32) {
	t.Helper()
	if err := b.CopyFromHost(s, unsafe.Pointer(&v[0]), 4*len(v)); err != nil {
		t.Fatalf("CopyFromHost: %v", err)
	}
}
