package cuda

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every field of symbols is bound by exactly one entry of symbolTable.
func TestSymbolTableComplete(t *testing.T) {
	var s symbols
	table := symbolTable(&s)
	seen := map[*uintptr]string{}
	for _, sym := range table {
		if len(sym.names) == 0 {
			t.Errorf("an entry has no name")
			continue
		}
		if prev, dup := seen[sym.addr]; dup {
			t.Errorf("%s and %s bind the same field", prev, sym.names[0])
		}
		seen[sym.addr] = sym.names[0]
	}
	for i, f := range symbolFields(&s) {
		if _, ok := seen[f]; !ok {
			t.Errorf("field %d of symbols is not in symbolTable", i)
		}
	}
	if len(seen) != len(symbolFields(&s)) {
		t.Errorf("symbolTable binds %d fields, symbols has %d", len(seen), len(symbolFields(&s)))
	}
}

// The functions the backend needs are all bound, required unless the
// design says optional.
func TestSymbolTableHasRequired(t *testing.T) {
	required := []string{
		"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
		"cuDeviceGet", "cuDeviceGetCount", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2",
		"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuCtxGetCurrent",
		"cuCtxSynchronize", "cuCtxGetStreamPriorityRange",
		"cuStreamCreateWithPriority", "cuStreamDestroy_v2", "cuStreamSynchronize", "cuStreamQuery", "cuStreamWaitEvent",
		"cuEventCreate", "cuEventDestroy_v2", "cuEventRecord", "cuEventQuery", "cuEventSynchronize", "cuEventElapsedTime_v2",
		"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2",
		"cuModuleLoadDataEx", "cuModuleGetFunction", "cuModuleUnload", "cuLaunchKernel",
	}
	optional := []string{"cuMemAllocAsync", "cuMemFreeAsync"}
	byName := map[string]symbol{}
	for _, sym := range symbolTable(new(symbols)) {
		byName[sym.names[0]] = sym
	}
	for _, n := range required {
		sym, ok := byName[n]
		if !ok {
			t.Errorf("%s is not bound (as a first choice)", n)
		} else if sym.optional {
			t.Errorf("%s is optional, want required", n)
		}
	}
	for _, n := range optional {
		if sym, ok := byName[n]; !ok || !sym.optional {
			t.Errorf("%s: bound %v, want optional", n, ok)
		}
	}
}

// notInResearchTable are bound names that go-tech.md §4's table does not
// list: plain functions that cuda.h 13.0 declares under these names, with no
// versioned variant (CUresult cuDeviceGetCount(int*), cuDeviceGetName(char*,
// int, CUdevice)).
var notInResearchTable = []string{"cuDeviceGetCount", "cuDeviceGetName"}

// Every bound name is a dlsym name of go-tech.md §4's table (or one of the
// few above), and none is the legacy unversioned export of a function the
// table says to bind by its versioned name, unless the table names it as a
// fallback. The table is read from a snapshot in testdata; when the
// research file is reachable the snapshot must still match it.
func TestSymbolNamesMatchResearch(t *testing.T) {
	snap, err := os.ReadFile("testdata/go-tech-s4.md")
	if err != nil {
		t.Fatal(err)
	}
	if live, err := os.ReadFile("../../../../shared/research/go-tech.md"); err == nil {
		if !strings.Contains(string(live), strings.TrimSpace(string(snap))) {
			t.Errorf("testdata/go-tech-s4.md no longer matches §4 of shared/research/go-tech.md: refresh it and recheck the bindings")
		}
	}
	documented, legacy := parseSymbolTable(t, string(snap))
	if len(documented) < 40 {
		t.Fatalf("parsed only %d names from the table", len(documented))
	}
	for _, name := range boundNames() {
		if !documented[name] && !slices.Contains(notInResearchTable, name) {
			t.Errorf("%s is bound but not a dlsym name of go-tech.md §4", name)
		}
		if legacy[name] && !documented[name] {
			t.Errorf("%s is a legacy ABI: bind the versioned name", name)
		}
	}
}

// parseSymbolTable returns the names in the dlsym column (and the "also
// exported" row), and the unversioned bases of versioned dlsym names.
func parseSymbolTable(t *testing.T, text string) (documented, legacy map[string]bool) {
	documented, legacy = map[string]bool{}, map[string]bool{}
	ident := regexp.MustCompile("`(cu[A-Za-z0-9_]+)`")
	version := regexp.MustCompile(`^(cu[A-Za-z0-9]+)_v[0-9]+$`)
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| cu") && !strings.HasPrefix(line, "| also exported") {
			continue
		}
		cols := strings.Split(line, "|")
		if len(cols) < 3 {
			t.Fatalf("short table row %q", line)
		}
		for _, m := range ident.FindAllStringSubmatch(cols[2], -1) {
			documented[m[1]] = true
			if v := version.FindStringSubmatch(m[1]); v != nil {
				legacy[v[1]] = true
			}
		}
	}
	return documented, legacy
}

func TestAvailableWithoutDriver(t *testing.T) {
	err := Available()
	if err == nil {
		t.Skip("a CUDA driver and device are present: nothing to check here")
	}
	t.Logf("Available: %v", err)
	if gpuRequired() {
		t.Fatalf("QD_GPU_RUN=1 but CUDA is unavailable: %v", err)
	}
	if !errors.Is(err, ErrNoDriver) && !errors.Is(err, ErrNoDevice) && !errors.Is(err, ErrDriverTooOld) {
		t.Errorf("Available() = %v, which wraps none of the sentinels", err)
	}
	if Available() != err {
		t.Error("Available does not keep its first answer")
	}
	if _, oerr := Open(0); oerr != err {
		t.Errorf("Open(0) = %v, want the same error as Available", oerr)
	}
}

// On a machine without libcuda the error is ErrNoDriver and carries the
// dlerror text for each name tried.
func TestNoDriverMessage(t *testing.T) {
	err := Available()
	if err == nil || !errors.Is(err, ErrNoDriver) {
		t.Skip("libcuda is present here")
	}
	for _, n := range libNames {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not mention %s", err, n)
		}
	}
}

func TestCStrings(t *testing.T) {
	b := cString("k_saxpy")
	if len(b) != 8 || b[7] != 0 || string(b[:7]) != "k_saxpy" {
		t.Errorf("cString = %q", b)
	}
	if got := goString(&b[0]); got != "k_saxpy" {
		t.Errorf("goString = %q", got)
	}
	if goString(nil) != "" {
		t.Error("goString(nil) not empty")
	}
	if got := cBytes([]byte("abc\x00def")); got != "abc" {
		t.Errorf("cBytes = %q", got)
	}
	if got := cBytes([]byte("abc")); got != "abc" {
		t.Errorf("cBytes without NUL = %q", got)
	}
}

func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{13000: "13.0", 12040: "12.4", 11020: "11.2", 12090: "12.9"} {
		if got := versionString(v); got != want {
			t.Errorf("versionString(%d) = %q, want %q", v, got, want)
		}
	}
}

// A hot-path frame round trip allocates nothing once the pool is warm.
func TestFramePoolNoAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under -race")
	}
	putFrame(getFrame())
	if n := testing.AllocsPerRun(100, func() {
		f := getFrame()
		f.a[0] = f.outAddr(0)
		putFrame(f)
	}); n != 0 {
		t.Errorf("getFrame/putFrame: %v allocations", n)
	}
}
