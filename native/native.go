package native

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Version is the generated code's contract with this package; qd gen
// writes it into each Register call, and Register refuses code of another
// version rather than run it against a changed API.
const Version = 1

// Func is a generated kernel: it reads its arguments from l and runs.
type Func func(l *Launch)

// Kernel is one generated kernel of a source file.
type Kernel struct {
	Name string
	Run  Func
}

// Array is an array argument as the CPU backend holds it: its first
// element, its shape (unused dimensions are 1) and, where the backend
// keeps one for the array's memory, the cache of its row headers.
type Array struct {
	Data  unsafe.Pointer
	Shape [4]int
	Rows  *Rows // nil: Slice2 and Slice3 build the headers per launch
}

// Rows keeps the row headers Slice2 and Slice3 last built over one
// buffer, so that launches over an (n, 2) array do not allocate and fill n
// headers each time (a third of a short-row kernel's time when they did).
// The CPU backend keeps one per buffer. The headers stay as built because
// kernels cannot assign, slice or append to a row: qd refuses those.
type Rows struct {
	last atomic.Pointer[rowsEntry]
}

// rowsEntry is one set of headers: for data seen with shape, as a [][]T or
// a [][][]T.
type rowsEntry struct {
	data  unsafe.Pointer
	shape [4]int
	rows  any
}

// cached returns the headers kept for a, or nil.
func (a *Array) cached() any {
	if a.Rows == nil {
		return nil
	}
	e := a.Rows.last.Load()
	if e == nil || e.data != a.Data || e.shape != a.Shape {
		return nil
	}
	return e.rows
}

// keep records rows as the headers of a.
func (a *Array) keep(rows any) {
	if a.Rows != nil {
		a.Rows.last.Store(&rowsEntry{a.Data, a.Shape, rows})
	}
}

// Source is the generated kernels of one source text.
type Source struct {
	File    string // the kernel file's name, as in its //line directives
	Kernels map[string]Func
}

var registry struct {
	mu sync.RWMutex
	m  map[string]*Source // by the hex SHA-256 of the source text
}

// Register records the generated kernels of the source whose SHA-256 is
// hash (hex). It is called from the init function of a generated file.
// Code generated for another Version is not registered: qd.Compile then
// runs those kernels on the closure compiler, as for a stale file, and
// `qd gen -check` reports the file as out of date.
func Register(version int, file, hash string, kernels ...Kernel) {
	if version != Version {
		return
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.m == nil {
		registry.m = map[string]*Source{}
	}
	s := &Source{File: file, Kernels: make(map[string]Func, len(kernels))}
	for _, k := range kernels {
		s.Kernels[k.Name] = k.Run
	}
	registry.m[hash] = s
}

// Hash is the key Register and Lookup use for a source text.
func Hash(src []byte) string {
	h := sha256.Sum256(src)
	return hex.EncodeToString(h[:])
}

// Lookup returns the generated kernels of src, if any were registered.
func Lookup(src []byte) (*Source, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	if len(registry.m) == 0 {
		return nil, false
	}
	s, ok := registry.m[Hash(src)]
	return s, ok
}
