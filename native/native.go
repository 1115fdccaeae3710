package native

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
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
// element and its shape (unused dimensions are 1).
type Array struct {
	Data  unsafe.Pointer
	Shape [4]int
}

// Source is the generated kernels of one source text.
type Source struct {
	File    string // the kernel file's name, as in its //line directives
	Kernels map[string]Func
}

var registry struct {
	mu sync.RWMutex
	m  map[string]*Source // by the hex SHA-256 of the source text
	// bad are registrations refused (another version), reported by
	// Lookup for their file.
	bad []string
}

// Register records the generated kernels of the source whose SHA-256 is
// hash (hex). It is called from the init function of a generated file.
// Code generated for another Version is not registered: qd.Compile then
// runs those kernels on the closure compiler, and Lookup's note says why.
func Register(version int, file, hash string, kernels ...Kernel) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if version != Version {
		registry.bad = append(registry.bad, fmt.Sprintf("the native kernels of %s were generated for qd gen version %d, not %d: run qd gen again", file, version, Version))
		return
	}
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

// Registered lists the files with generated kernels registered in the
// process, and the registrations refused, for messages.
func Registered() (files []string, refused []string) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	for _, s := range registry.m {
		files = append(files, s.File)
	}
	return files, append([]string(nil), registry.bad...)
}
