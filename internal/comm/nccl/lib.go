package nccl

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// ErrNoLibrary is matched by Load's error when NCCL (RCCL on AMD) cannot be
// opened, or lacks a function qd needs. Collectives on GPUs need it;
// callers test with errors.Is and fall back or say so.
var ErrNoLibrary = errors.New("no NCCL library")

// libNames are the names tried for each arch, in order: the versioned
// soname first (what the packages install for programs), then the
// development symlink.
var libNames = map[string][]string{
	"cuda":   {"libnccl.so.2", "libnccl.so"},
	"amdgpu": {"librccl.so.1", "librccl.so"},
}

// vendors names each arch's library in messages.
var vendors = map[string]string{"cuda": "NCCL", "amdgpu": "RCCL"}

// Lib is NCCL (or RCCL) opened and bound. It is shared by every
// communicator of its arch in the process.
type Lib struct {
	arch    string // "cuda", "amdgpu"
	vendor  string // "NCCL", "RCCL"
	lib     *gpu.Library
	version int // ncclGetVersion's code, e.g. 22803
	f       fns
	// issue serializes the enqueues of every communicator of the library:
	// NCCL does not allow operations on independent communicators of one
	// device to be issued from several threads at once.
	issue *sync.Mutex
}

// fns are the bound functions. Each comment gives the C signature; T* is
// an out-parameter. Enums and ints are C int.
type fns struct {
	getVersion     gpu.Fn // (int* version)
	getUniqueID    gpu.Fn // (ncclUniqueId* id)
	initScalable   gpu.Fn // (ncclComm_t* comm, int nranks, int rank, int nId, ncclUniqueId* ids, ncclConfig_t* config); optional
	initRank       gpu.Fn // (ncclComm_t* comm, int nranks, ncclUniqueId id [by value], int rank)
	initRankConfig gpu.Fn // (ncclComm_t* comm, int nranks, ncclUniqueId id [by value], int rank, ncclConfig_t* config); optional, bound for completeness: qd passes no config
	destroy        gpu.Fn // (ncclComm_t comm)
	abort          gpu.Fn // (ncclComm_t comm)
	finalize       gpu.Fn // (ncclComm_t comm); optional, not called (doc.go says why)
	getAsyncError  gpu.Fn // (ncclComm_t comm, ncclResult_t* result)
	getErrorString gpu.Fn // const char* (ncclResult_t result)
	getLastError   gpu.Fn // const char* (ncclComm_t comm); optional (NCCL 2.13)
	allReduce      gpu.Fn // (const void* send, void* recv, size_t count, dtype, op, comm, stream)
	broadcast      gpu.Fn // (const void* send, void* recv, size_t count, dtype, int root, comm, stream)
	reduce         gpu.Fn // (const void* send, void* recv, size_t count, dtype, op, int root, comm, stream)
	allGather      gpu.Fn // (const void* send, void* recv, size_t sendcount, dtype, comm, stream)
	reduceScatter  gpu.Fn // (const void* send, void* recv, size_t recvcount, dtype, op, comm, stream)
	send           gpu.Fn // (const void* buf, size_t count, dtype, int peer, comm, stream)
	recv           gpu.Fn // (void* buf, size_t count, dtype, int peer, comm, stream)
	groupStart     gpu.Fn // ()
	groupEnd       gpu.Fn // ()
	commCount      gpu.Fn // (const ncclComm_t comm, int* count)
	commUserRank   gpu.Fn // (const ncclComm_t comm, int* rank)
}

func (f *fns) bindings() []gpu.Binding {
	b := func(fn *gpu.Fn, name string, optional bool) gpu.Binding {
		return gpu.Binding{Fn: fn, Names: []string{name}, Optional: optional}
	}
	const req, opt = false, true
	return []gpu.Binding{
		b(&f.getVersion, "ncclGetVersion", req),
		b(&f.getUniqueID, "ncclGetUniqueId", req),
		b(&f.initScalable, "ncclCommInitRankScalable", opt),
		b(&f.initRank, "ncclCommInitRank", req),
		b(&f.initRankConfig, "ncclCommInitRankConfig", opt),
		b(&f.destroy, "ncclCommDestroy", req),
		b(&f.abort, "ncclCommAbort", req),
		b(&f.finalize, "ncclCommFinalize", opt),
		b(&f.getAsyncError, "ncclCommGetAsyncError", req),
		b(&f.getErrorString, "ncclGetErrorString", req),
		b(&f.getLastError, "ncclGetLastError", opt),
		b(&f.allReduce, "ncclAllReduce", req),
		b(&f.broadcast, "ncclBroadcast", req),
		b(&f.reduce, "ncclReduce", req),
		b(&f.allGather, "ncclAllGather", req),
		b(&f.reduceScatter, "ncclReduceScatter", req),
		b(&f.send, "ncclSend", req),
		b(&f.recv, "ncclRecv", req),
		b(&f.groupStart, "ncclGroupStart", req),
		b(&f.groupEnd, "ncclGroupEnd", req),
		b(&f.commCount, "ncclCommCount", req),
		b(&f.commUserRank, "ncclCommUserRank", req),
	}
}

// loads caches Load's result per arch: a process without NCCL does not
// retry dlopen on every communicator.
var loads = map[string]*struct {
	once sync.Once
	lib  *Lib
	err  error
}{"cuda": {}, "amdgpu": {}}

// Load opens and binds the collective library of a GPU arch: NCCL for
// "cuda", RCCL for "amdgpu". It runs once per arch; later calls return the
// first result. Without the library the error matches ErrNoLibrary and
// names the files tried.
func Load(arch string) (*Lib, error) {
	l, ok := loads[arch]
	if !ok {
		return nil, fmt.Errorf("nccl: no collective library for arch %q: NCCL serves \"cuda\", RCCL \"amdgpu\"", arch)
	}
	l.once.Do(func() { l.lib, l.err = open(arch, libNames[arch]) })
	return l.lib, l.err
}

// open opens the first of names that loads and binds it.
func open(arch string, names []string) (*Lib, error) {
	vendor := vendors[arch]
	var reasons []string
	var lib *gpu.Library
	for _, name := range names {
		l, err := gpu.OpenLibrary(name)
		if err == nil {
			lib = l
			break
		}
		reasons = append(reasons, openReason(err))
	}
	if lib == nil {
		return nil, fmt.Errorf("nccl: %w: %s is needed for collectives on %s GPUs, and none of %s could be opened (%s)",
			ErrNoLibrary, vendor, archWord(arch), strings.Join(names, ", "), strings.Join(reasons, "; "))
	}
	l := &Lib{arch: arch, vendor: vendor, lib: lib, issue: new(sync.Mutex)}
	// Every binding is bound as optional so that the missing one is named
	// here in NCCL's terms, rather than in gpu.Bind's driver terms.
	bs := l.f.bindings()
	for i := range bs {
		bs[i].Optional = true
	}
	if err := gpu.Bind(lib, bs); err != nil {
		return nil, fmt.Errorf("nccl: %s: %w", lib.Name, err)
	}
	for _, b := range l.f.bindings() {
		if !b.Optional && !b.Fn.Bound() {
			return nil, fmt.Errorf("nccl: %w: %s lacks %s: it is too old for qd (NCCL 2.7 or newer is needed) or not %s",
				ErrNoLibrary, lib.Name, b.Names[0], vendor)
		}
	}
	var v int32
	if r := gpu.Call(&l.f.getVersion, uintptr(unsafe.Pointer(&v))); r != success {
		return nil, l.newError(l.f.getVersion.Name, r, 0)
	}
	l.version = int(v)
	return l, nil
}

// openReason is the loader's message in err, without the "no GPU driver"
// wording of gpu.OpenLibrary: a missing NCCL says nothing about the driver.
func openReason(err error) string {
	s := err.Error()
	if p := gpu.ErrNoDriver.Error() + " ("; strings.HasPrefix(s, p) && strings.HasSuffix(s, ")") {
		s = s[len(p) : len(s)-1]
	}
	return s
}

func archWord(arch string) string {
	if arch == "amdgpu" {
		return "AMD"
	}
	return "NVIDIA"
}

// Version is the library's version code (NCCL_VERSION_CODE), e.g. 22803
// for 2.28.3. RCCL reports the NCCL version it follows.
func (l *Lib) Version() int { return l.version }

// Arch is the GPU arch the library serves: "cuda" or "amdgpu".
func (l *Lib) Arch() string { return l.arch }

// String says which library this is, e.g. "NCCL 2.28.3 (libnccl.so.2)".
func (l *Lib) String() string {
	return fmt.Sprintf("%s %s (%s)", l.vendor, versionString(l.version), l.lib.Name)
}

// versionString formats a version code. NCCL changed the encoding after
// 2.8: codes up to 2.8.x are X*1000+Y*100+Z, later ones X*10000+Y*100+Z
// (the NCCL_VERSION macro of nccl.h).
func versionString(code int) string {
	if code < 10000 {
		return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
}

// versionCode is NCCL_VERSION(major, minor, patch).
func versionCode(major, minor, patch int) int {
	if major <= 2 && minor <= 8 {
		return major*1000 + minor*100 + patch
	}
	return major*10000 + minor*100 + patch
}

// NewUniqueID makes the id that names a new communicator: one rank makes
// it and hands its bytes to every other, which pass it to NewComm. It
// holds the address rank 0's bootstrap listens on.
func (l *Lib) NewUniqueID() ([128]byte, error) {
	id := new([128]byte)
	// Locked, so that ncclGetLastError is read on the thread that failed.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if r := gpu.Call(&l.f.getUniqueID, uintptr(unsafe.Pointer(id))); r != success {
		return [128]byte{}, l.newError(l.f.getUniqueID.Name, r, 0)
	}
	return *id, nil
}
