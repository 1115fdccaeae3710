package hip

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/amdtools"
	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// These tests need the HIP libraries (libamdhip64 with hiprtc), not an AMD
// GPU: CI installs Debian's ROCm 5.2 with .ci/install-amd-tools.sh. Where
// the libraries are absent they skip, or fail under QD_REQUIRE_AMD_TOOLS=1.

// crashEnv makes this test binary a compiler child that crashes before it
// answers (TestMain): the crash is the test's, not the package's.
const crashEnv = "QD_HIP_TEST_CRASHING_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(crashEnv) != "" {
		panic("qd: hiprtc child: crash requested by a test")
	}
	os.Exit(m.Run())
}

func needLibrary(t *testing.T) *library {
	t.Helper()
	l, err := openLibrary()
	if err != nil {
		amdtools.Unavailable(t, "the HIP runtime (libamdhip64 with hiprtc)", err)
	}
	return l
}

// isolateCache gives the test its own code object cache.
func isolateCache(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv(cacheEnv, dir)
	return dir
}

func saxpyPlan(t *testing.T) *lower.Plan {
	b := ir.NewBuilder("saxpy")
	a, x, y := b.Scalar("a", ir.F32), b.Array("x", ir.F32, 1), b.Array("y", ir.F32, 1)
	b.Parallel(ir.LenOf(x, 0), func(i *ir.Var) {
		b.Store(y, ir.Op(ir.Add, ir.Op(ir.Mul, ir.P(a), ir.Fn(ir.Exp, ir.Ld(x, ir.Ref(i)))), ir.Ld(y, ir.Ref(i))), ir.Ref(i))
	})
	plan, err := lower.Lower(b.Kernel())
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// Every field of the runtime's table and of own is bound by exactly one
// name, and no name twice.
func TestBindingsComplete(t *testing.T) {
	var c gpu.Calls
	var o own
	bs := bindings(&c, &o)
	byFn, byName := map[*gpu.Fn]string{}, map[string]*gpu.Fn{}
	for _, b := range bs {
		name := strings.Join(b.Names, "|")
		byFn[b.Fn], byName[name] = name, b.Fn
	}
	want := reflect.TypeOf(c).NumField() + reflect.TypeOf(o).NumField()
	for _, spec := range callNames {
		if spec == unbound {
			want--
		}
	}
	if len(bs) != want || len(byFn) != want || len(byName) != want {
		t.Errorf("%d bindings of %d functions under %d names, for %d fields", len(bs), len(byFn), len(byName), want)
	}
	for name := range byName {
		if !strings.HasPrefix(name, "hip") || strings.Contains(name, "|") {
			t.Errorf("binding %q: want one hip* name", name)
		}
	}
	for field := range callNames {
		if _, ok := reflect.TypeOf(c).FieldByName(field); !ok {
			t.Errorf("callNames names %s, which gpu.Calls lacks", field)
		}
	}
	// Only the stream-ordered allocator and its pools (ROCm 5.1; qd
	// relies on them from 5.3), the launch with attributes (ROCm 6.2), the
	// graph calls and those of traced graphs, and the ROCm 6 layout of the
	// device properties are optional.
	for _, b := range bindings(&c, &o) {
		opt := b.Fn == &c.MemAllocAsync || b.Fn == &c.MemFreeAsync || b.Fn == &c.MemPoolSetAccess || b.Fn == &c.LaunchKernelEx ||
			b.Fn == &c.EventRecordWithFlags || b.Fn == &c.StreamGetCaptureInfo ||
			b.Fn == &o.defaultMemPool || b.Fn == &o.propsR0600 ||
			strings.HasPrefix(b.Names[0], "hipGraph") || strings.HasPrefix(b.Names[0], "hipStream") && strings.HasSuffix(b.Names[0], "Capture")
		if b.Optional != opt {
			t.Errorf("%s: optional %v, want %v", b.Names[0], b.Optional, opt)
		}
	}
}

// On a machine with the HIP libraries but no AMD GPU (CI), the driver
// fails to load with an error that says no device was found.
func TestNoDevice(t *testing.T) {
	l := needLibrary(t)
	if _, err := os.Stat("/dev/kfd"); err == nil {
		t.Skip("this machine has /dev/kfd: an AMD GPU may be present")
	}
	err := Available()
	if err == nil {
		t.Fatal("HIP reports a device on a machine without /dev/kfd")
	}
	var de *gpu.DriverError
	if !errors.Is(err, gpu.ErrNoDevice) || !errors.As(err, &de) || !strings.Contains(err.Error(), "no AMD GPU found") {
		t.Fatalf("error %q: want a DriverError wrapping gpu.ErrNoDevice that says no AMD GPU was found", err)
	}
	if de.Op != "hipInit" && de.Op != "hipGetDeviceCount" {
		t.Errorf("failing call %s, want hipInit or hipGetDeviceCount", de.Op)
	}
	t.Logf("HIP %s without a device: %v", versionString(l.version), err)
	if _, err := Devices(); !errors.Is(err, gpu.ErrNoDevice) {
		t.Errorf("Devices: %v", err)
	}
	if _, err := Open(0); !errors.Is(err, gpu.ErrNoDevice) {
		t.Errorf("Open: %v", err)
	}
}

// Build compiles through hiprtc for a device's target, with no device:
// csrc source, the child process, the code object; a second Build is a
// disk cache hit, which starts no compiler.
func TestBuildThroughHiprtc(t *testing.T) {
	l := needLibrary(t)
	dir := isolateCache(t)
	d := &driver{library: l}
	props := &gpu.Props{Target: "gfx90a", WarpSize: 64}
	plan := saxpyPlan(t)
	start := time.Now()
	img, err := d.Build(plan, props, backend.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cold := time.Since(start)
	if err := amdtools.CheckCodeObject(img.Code, "gfx90a", []string{img.Layout.Tasks[0].Entry}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !strings.HasSuffix(entries[0].Name(), ".co") {
		t.Fatalf("cache holds %v, want one code object", entries)
	}
	crashing := *l
	crashing.childSwitch = crashEnv + "=1" // a child started now would fail the Build: a hit starts none
	d = &driver{library: &crashing}
	start = time.Now()
	again, err := d.Build(plan, props, backend.CompileOptions{})
	if err != nil {
		t.Fatalf("cache hit: %v", err)
	}
	hit := time.Since(start)
	if string(again.Code) != string(img.Code) {
		t.Error("the cached code object differs")
	}
	t.Logf("hiprtc %s: compile %v, cache hit %v", l.rtc.Version(), cold, hit)

	// A different target is another key.
	if _, err := d.Build(plan, &gpu.Props{Target: "gfx908", WarpSize: 64}, backend.CompileOptions{}); err == nil {
		t.Error("a gfx908 build was served from the gfx90a entry (no child ran)")
	}
	// A wave size that contradicts the target table is refused.
	if _, err := d.Build(plan, &gpu.Props{Target: "gfx1100", WarpSize: 64}, backend.CompileOptions{}); err == nil || !strings.Contains(err.Error(), "wavefronts") {
		t.Errorf("gfx1100 with wave 64: %v", err)
	}
}

// Source that does not compile gives hiprtc's log in the error, which
// matches gpu.ErrInvalidCode.
func TestCompileErrorHasLog(t *testing.T) {
	needLibrary(t)
	isolateCache(t)
	_, err := Compile("extern \"C\" __attribute__((global)) void k(float *x) { x[0] = undeclared_name; }\n", "bad", "gfx90a")
	var de *gpu.DriverError
	if !errors.As(err, &de) || !errors.Is(err, gpu.ErrInvalidCode) || de.Op != "hiprtcCompileProgram" {
		t.Fatalf("error %v: want hiprtcCompileProgram's DriverError matching ErrInvalidCode", err)
	}
	if !strings.Contains(de.Log, "undeclared_name") || !strings.Contains(err.Error(), "compiler log") {
		t.Errorf("the error does not carry the log: %v", err)
	}
}

// A compiler child that dies without answering becomes an error; the
// parent (this test) lives on. The child here is this test binary in
// crash mode, so no HIP library is needed.
func TestChildCrashIsAnError(t *testing.T) {
	l := &library{rtcLib: &gpu.Library{Name: "libhiprtc-test"}, childSwitch: crashEnv + "=1"}
	_, err := l.runChild(request{Source: "x", Name: "x.hip"})
	if !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(err.Error(), "crashed") || !strings.Contains(err.Error(), "crash requested by a test") {
		t.Fatalf("error %v: want an ErrUnsupported that says the compiler crashed, with its output", err)
	}
}

// Debian's ROCm 5.2 hiprtc aborts the process for gfx942 (amdgpu.md §3):
// in the child, that is an error and this process continues. A newer
// hiprtc compiles it.
func TestRealCompilerCrashContained(t *testing.T) {
	l := needLibrary(t)
	isolateCache(t)
	d := &driver{library: l}
	_, err := d.Build(saxpyPlan(t), &gpu.Props{Target: "gfx942", WarpSize: 64}, backend.CompileOptions{})
	switch {
	case l.version < 50300000 && err == nil:
		t.Log("this ROCm 5.2 hiprtc compiled for gfx942 (expected it to abort)")
	case l.version < 50300000:
		if !errors.Is(err, backend.ErrUnsupported) || !strings.Contains(err.Error(), "crashed") {
			t.Fatalf("gfx942 on HIP %s: %v", versionString(l.version), err)
		}
		t.Logf("contained: %v", err)
	case err != nil:
		t.Fatalf("gfx942 on HIP %s: %v", versionString(l.version), err)
	}
}

func TestCache(t *testing.T) {
	isolateCache(t)
	k := cacheKey("c", []string{"--gpu-architecture=gfx90a"}, "src")
	for _, other := range []string{
		cacheKey("d", []string{"--gpu-architecture=gfx90a"}, "src"),
		cacheKey("c", []string{"--gpu-architecture=gfx942"}, "src"),
		cacheKey("c", []string{"--gpu-architecture=gfx90a"}, "src2"),
		cacheKey("c", []string{"--gpu-architecture=gfx90a", "x"}, "src"),
	} {
		if other == k {
			t.Error("two different inputs share a cache key")
		}
	}
	if cacheGet(k) != nil {
		t.Fatal("hit in an empty cache")
	}
	cachePut(k, []byte("not an ELF file"))
	if cacheGet(k) != nil {
		t.Error("a file that is not a code object was served")
	}
	cachePut(k, []byte("\x7fELF..."))
	if string(cacheGet(k)) != "\x7fELF..." {
		t.Error("miss after a put")
	}
	t.Setenv(cacheEnv, "off")
	if cacheGet(k) != nil {
		t.Error("hit with the cache off")
	}
}

func TestErrorTable(t *testing.T) {
	for code, c := range codes {
		if !strings.HasPrefix(c.name, "hipError") {
			t.Errorf("%d: name %q", code, c.name)
		}
	}
	for code, want := range map[int32]gpu.Class{2: gpu.OutOfMemory, 700: gpu.Fatal, 719: gpu.Fatal, 209: gpu.InvalidCode,
		100: gpu.NoDevice, 101: gpu.NoDevice, 801: gpu.NotSupported, 600: gpu.Failed, 12345: gpu.Failed} {
		if got := classify(code); got != want {
			t.Errorf("classify(%d) = %v, want %v", code, got, want)
		}
	}
	var l *library
	if name, _ := l.errorText(101); name != "hipErrorInvalidDevice" {
		t.Errorf("errorText(101) without the library = %q", name)
	}
}

// The codes after which HIP, as CUDA, keeps the device lost for the rest
// of the process (an illegal address, a timeout, a device-side assert, a
// failed launch: CUDA's sticky codes of the same numbers) are Fatal, so an
// error of one, reported by the first call of a new Program's device too,
// matches ErrDeviceLost and qd.Init says the device was lost earlier.
func TestStickyCodesLoseTheDevice(t *testing.T) {
	for _, code := range []int32{700, 702, 710, 719} {
		err := gpu.NewDriverError(&driver{}, "hipDeviceGetStreamPriorityRange", code)
		if err.Class != gpu.Fatal || !errors.Is(err, backend.ErrDeviceLost) {
			t.Errorf("%s (%d): class %v, want Fatal, matching ErrDeviceLost", err.Name, code, err.Class)
		}
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{50221153: "5.2.21153", 60342134: "6.3.42134", 0: "0.0.0"} {
		if got := versionString(v); got != want {
			t.Errorf("versionString(%d) = %q, want %q", v, got, want)
		}
	}
}

// The gcnArchName offsets are inside the buffer given to the runtime.
func TestPropsBuffer(t *testing.T) {
	for _, off := range []int{archOffsetR0000, archOffsetR0600} {
		if off+256 > propsBufferSize {
			t.Errorf("offset %d + 256 exceeds the %d-byte buffer", off, propsBufferSize)
		}
	}
}
