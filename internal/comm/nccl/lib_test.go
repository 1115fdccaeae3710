package nccl

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/comm"
)

// The enum values are nccl.h's (src/nccl.h.in of NVIDIA/nccl).
func TestDataTypes(t *testing.T) {
	want := map[comm.DType]int32{
		comm.Int8: 0, comm.Uint8: 1, comm.Int32: 2, comm.Uint32: 3, comm.Int64: 4, comm.Uint64: 5,
		comm.Float32: 7, comm.Float64: 8, // ncclFloat16 is 6
		comm.Int16: noType, comm.Uint16: noType,
	}
	for dt, v := range want {
		if got := dataTypes[dt]; got != v {
			t.Errorf("%v: %d, want %d", dt, got, v)
		}
	}
	// Every comm type is in the table, and nothing beyond.
	if n := len(dataTypes); n != len(want) || comm.DType(n-1).Size() == 0 || comm.DType(n).Size() != 0 {
		t.Errorf("the table has %d types; comm has others", n)
	}
}

func TestRedOps(t *testing.T) {
	want := map[comm.Op]int32{comm.Sum: 0, comm.Prod: 1, comm.Max: 2, comm.Min: 3, comm.Avg: 4}
	for op, v := range want {
		if got := redOps[op]; got != v {
			t.Errorf("%v: %d, want %d", op, got, v)
		}
	}
	if n := len(redOps); n != len(want) || !strings.HasPrefix(comm.Op(n).String(), "Op(") {
		t.Errorf("the table has %d reductions; comm has others", n)
	}
}

func TestResults(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		v    int32
		name string
	}{
		{Success, 0, "ncclSuccess"}, {UnhandledCudaError, 1, "ncclUnhandledCudaError"},
		{SystemError, 2, "ncclSystemError"}, {InternalError, 3, "ncclInternalError"},
		{InvalidArgument, 4, "ncclInvalidArgument"}, {InvalidUsage, 5, "ncclInvalidUsage"},
		{RemoteError, 6, "ncclRemoteError"}, {InProgress, 7, "ncclInProgress"}, {Timeout, 8, "ncclTimeout"},
		{Result(42), 42, "ncclResult(42)"},
	} {
		if int32(tc.r) != tc.v || tc.r.String() != tc.name {
			t.Errorf("%s = %d, want %s = %d", tc.r, int32(tc.r), tc.name, tc.v)
		}
	}
}

// NCCL_VERSION changed its encoding after 2.8.
func TestVersions(t *testing.T) {
	for _, tc := range []struct {
		maj, min, patch, code int
		s                     string
	}{
		{2, 8, 4, 2804, "2.8.4"}, {2, 9, 6, 20906, "2.9.6"}, {2, 10, 3, 21003, "2.10.3"},
		{2, 28, 3, 22803, "2.28.3"}, {2, 20, 5, 22005, "2.20.5"},
	} {
		if c := versionCode(tc.maj, tc.min, tc.patch); c != tc.code {
			t.Errorf("versionCode(%d, %d, %d) = %d, want %d", tc.maj, tc.min, tc.patch, c, tc.code)
		}
		if s := versionString(tc.code); s != tc.s {
			t.Errorf("versionString(%d) = %q, want %q", tc.code, s, tc.s)
		}
	}
	l := &Lib{vendor: "NCCL", version: 22803, lib: &gpu.Library{Name: "libnccl.so.2"}}
	if s := l.String(); s != "NCCL 2.28.3 (libnccl.so.2)" {
		t.Errorf("String() = %q", s)
	}
}

func TestLoadUnknownArch(t *testing.T) {
	for _, arch := range []string{"vulkan", "cpu", ""} {
		if l, err := Load(arch); err == nil || l != nil || !strings.Contains(err.Error(), `"`+arch+`"`) {
			t.Errorf("Load(%q) = %v, %v", arch, l, err)
		}
	}
}

// A library that is not there is ErrNoLibrary, naming what was tried and
// why NCCL matters, without blaming the GPU driver.
func TestMissingLibrary(t *testing.T) {
	names := []string{"libqd-no-such-nccl.so.9", "libqd-no-such-nccl.so"}
	_, err := open("cuda", names)
	if !errors.Is(err, ErrNoLibrary) || errors.Is(err, gpu.ErrNoDriver) {
		t.Fatalf("open: %v", err)
	}
	msg := err.Error()
	for _, want := range append(names, "NCCL is needed for collectives on NVIDIA GPUs") {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, gpu.ErrNoDriver.Error()) {
		t.Errorf("the error speaks of the GPU driver: %s", msg)
	}
	t.Log(msg)
}

// Load on this machine: either NCCL is here and works, or the error is
// ErrNoLibrary naming both names; the same answer every time.
func TestLoadHere(t *testing.T) {
	for _, arch := range []string{"cuda", "amdgpu"} {
		l, err := Load(arch)
		l2, err2 := Load(arch)
		if l != l2 || err != err2 {
			t.Errorf("%s: Load is not cached: %v %v, then %v %v", arch, l, err, l2, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrNoLibrary) {
				t.Errorf("%s: %v does not match ErrNoLibrary", arch, err)
			}
			for _, name := range libNames[arch] {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("%s: the error does not name %s: %v", arch, name, err)
				}
			}
			t.Logf("%s: no library here: %v", arch, err)
			continue
		}
		if l.Version() < versionCode(2, 7, 0) || !strings.HasPrefix(l.String(), vendors[arch]+" 2.") || l.Arch() != arch {
			t.Errorf("%s: %s, version %d", arch, l, l.Version())
		}
		t.Logf("%s: %s; ncclCommInitRankScalable bound: %v", arch, l, l.f.initScalable.Bound())
	}
}

// ncclCommInitRank's by-value id is laid out as the platform's C
// convention places it (initrank.go).
func TestInitRankArgs(t *testing.T) {
	var id [128]byte
	for i := range id {
		id[i] = byte(i*7 + 1)
	}
	const out = 0x1000
	args, ok := initRankArgs(out, 8, 5, &id)
	switch {
	case runtime.GOARCH == "amd64" && runtime.GOOS != "windows":
		if !ok || len(args) != 22 || args[0] != out || args[1] != 8 || args[2] != 5 || args[3]|args[4]|args[5] != 0 {
			t.Fatalf("SysV x86-64: %#x", args)
		}
		var back [128]byte
		for i, w := range args[6:] {
			binary.LittleEndian.PutUint64(back[8*i:], uint64(w))
		}
		if back != id {
			t.Errorf("the stack words hold %x, want %x", back, id)
		}
	case runtime.GOARCH == "arm64":
		if !ok || len(args) != 4 || args[0] != out || args[1] != 8 || args[2] != uintptr(unsafe.Pointer(&id)) || args[3] != 5 {
			t.Fatalf("AArch64: %#x", args)
		}
	default:
		t.Logf("%s/%s: no by-value layout (ok %v)", runtime.GOOS, runtime.GOARCH, ok)
	}
	s := scalableArgs(out, 8, 5, &id)
	if len(s) != 6 || s[0] != out || s[1] != 8 || s[2] != 5 || s[3] != 1 || s[4] != uintptr(unsafe.Pointer(&id)) || s[5] != 0 {
		t.Errorf("scalable: %#x", s)
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Lib: "NCCL", Call: "ncclAllReduce", Code: InvalidArgument, Text: "invalid argument (run with NCCL_DEBUG=WARN for details)", Last: "Invalid config blocking attribute value 3\n"}
	if got, want := e.Error(), "NCCL: ncclAllReduce failed: invalid argument (run with NCCL_DEBUG=WARN for details) (ncclInvalidArgument, code 4): Invalid config blocking attribute value 3"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	e = &Error{Lib: "RCCL", Call: "ncclCommGetAsyncError", Code: RemoteError, Async: true}
	if got := e.Error(); !strings.HasPrefix(got, "RCCL: the communicator failed while its work ran (reported by ncclCommGetAsyncError): (ncclRemoteError, code 6); another rank failed") {
		t.Errorf("async: %s", got)
	}
}
