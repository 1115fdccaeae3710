package vk

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// libNames are the loader's names, tried in order: the Khronos loader on
// Linux and Windows; on macOS the loader of the Vulkan SDK, then MoltenVK
// itself (which is a Vulkan implementation that exports the entry points).
func libNames() []string {
	switch runtime.GOOS {
	case "windows":
		return []string{"vulkan-1.dll"}
	case "darwin":
		return []string{"libvulkan.1.dylib", "/usr/local/lib/libvulkan.1.dylib", "libMoltenVK.dylib"}
	}
	return []string{"libvulkan.so.1", "libvulkan.so"}
}

// call calls the Vulkan function at fn. Arguments are often Go pointers
// converted to uintptr; the directive makes the compiler keep what they
// point to on the heap and alive for the call (as gpu.Call explains).
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// frame is argument and structure storage for calls on hot paths
// (recording a launch, submitting): passing a slice that already exists
// to the variadic purego.SyscallN allocates nothing, where one built in
// the call expression is moved to the heap. Frames are pooled, so that
// concurrent calls never share one; as heap objects they never move, so
// their addresses may be passed as uintptr.
type frame struct {
	a      [8]uintptr
	begin  CommandBufferBeginInfo
	alloc  CommandBufferAllocateInfo
	wait   SemaphoreWaitInfo
	tl     TimelineSemaphoreSubmitInfo
	submit SubmitInfo
	sems   []uint64
	vals   []uint64
	stages []uint32
	signal uint64
	value  uint64
	out    uint64 // an out-parameter
}

var frames = sync.Pool{New: func() any { return new(frame) }}

func getFrame() *frame { return frames.Get().(*frame) }

func putFrame(f *frame) {
	f.tl, f.submit, f.wait = TimelineSemaphoreSubmitInfo{}, SubmitInfo{}, SemaphoreWaitInfo{} // no pointers kept
	frames.Put(f)
}

// call calls fn with the first n of args, through the frame's argument
// storage (an array, not a variadic list: see frame). Go memory passed in
// args must be heap memory the caller keeps alive across the call (the
// frame's own fields, or runtime.KeepAlive).
func (f *frame) call(fn uintptr, n int, args [8]uintptr) uintptr {
	f.a = args
	r, _, _ := purego.SyscallN(fn, f.a[:n]...)
	return r
}

// result is call for a function that returns a VkResult.
func (f *frame) result(fn uintptr, n int, args [8]uintptr) Result {
	return Result(int32(uint32(f.call(fn, n, args))))
}

// callResult calls fn and turns its VkResult into an error naming name.
//
//go:uintptrescapes
func callResult(name string, fn uintptr, args ...uintptr) (Result, error) {
	r, _, _ := purego.SyscallN(fn, args...)
	res := Result(int32(uint32(r)))
	return res, check(name, res)
}

// Loader is the opened Vulkan loader: the global functions.
type Loader struct {
	Name string // the library's name as opened

	getInstanceProcAddr                  uintptr
	createInstance                       uintptr
	enumerateInstanceVersion             uintptr // Vulkan 1.1
	enumerateInstanceExtensionProperties uintptr
}

var (
	loaderOnce sync.Once
	loader     *Loader
	loaderErr  error
)

// Open opens the Vulkan loader once per process. The error wraps
// ErrNoLoader and says what each name tried gave.
func Open() (*Loader, error) {
	loaderOnce.Do(func() { loader, loaderErr = open() })
	return loader, loaderErr
}

func open() (*Loader, error) {
	lib, err := gpu.OpenLibrary(libNames()...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoLoader, errors.Unwrap(err))
	}
	l := &Loader{Name: lib.Name, getInstanceProcAddr: lib.Lookup("vkGetInstanceProcAddr")}
	if l.getInstanceProcAddr == 0 {
		return nil, fmt.Errorf("%w: %s exports no vkGetInstanceProcAddr", ErrNoLoader, lib.Name)
	}
	l.createInstance = l.instanceProc(0, "vkCreateInstance")
	l.enumerateInstanceVersion = l.instanceProc(0, "vkEnumerateInstanceVersion")
	l.enumerateInstanceExtensionProperties = l.instanceProc(0, "vkEnumerateInstanceExtensionProperties")
	if l.createInstance == 0 || l.enumerateInstanceExtensionProperties == 0 {
		return nil, fmt.Errorf("%w: %s lacks vkCreateInstance", ErrNoLoader, lib.Name)
	}
	return l, nil
}

func (l *Loader) instanceProc(instance uintptr, name string) uintptr {
	s := gpu.CString(name)
	return call(l.getInstanceProcAddr, instance, uintptr(unsafe.Pointer(&s[0])))
}

// Version is the instance-level API version the loader supports (1.0 when
// it predates vkEnumerateInstanceVersion).
func (l *Loader) Version() uint32 {
	if l.enumerateInstanceVersion == 0 {
		return MakeAPIVersion(1, 0, 0)
	}
	var v uint32
	if _, err := callResult("vkEnumerateInstanceVersion", l.enumerateInstanceVersion, uintptr(unsafe.Pointer(&v))); err != nil {
		return MakeAPIVersion(1, 0, 0)
	}
	return v
}

// InstanceExtensions lists the instance extensions the loader and its
// drivers offer.
func (l *Loader) InstanceExtensions() ([]string, error) {
	return enumerateExtensions("vkEnumerateInstanceExtensionProperties", func(n *uint32, p *ExtensionProperties) uintptr {
		return call(l.enumerateInstanceExtensionProperties, 0, uintptr(unsafe.Pointer(n)), uintptr(unsafe.Pointer(p)))
	})
}

// enumerateExtensions runs Vulkan's two-call enumeration of extension
// properties.
func enumerateExtensions(name string, f func(n *uint32, p *ExtensionProperties) uintptr) ([]string, error) {
	for {
		var n uint32
		if err := check(name, Result(int32(uint32(f(&n, nil))))); err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, nil
		}
		props := make([]ExtensionProperties, n)
		r := Result(int32(uint32(f(&n, &props[0]))))
		if r == Incomplete {
			continue // the list grew between the calls
		}
		if err := check(name, r); err != nil {
			return nil, err
		}
		names := make([]string, n)
		for i := range names {
			names[i] = gpu.CBytes(props[i].ExtensionName[:])
		}
		return names, nil
	}
}

// cstrings returns C strings for names and an array of pointers to them,
// kept alive by the returned values.
func cstrings(names []string) ([][]byte, []unsafe.Pointer) {
	if len(names) == 0 {
		return nil, nil
	}
	bs := make([][]byte, len(names))
	ps := make([]unsafe.Pointer, len(names))
	for i, n := range names {
		bs[i] = gpu.CString(n)
		ps[i] = unsafe.Pointer(&bs[i][0])
	}
	return bs, ps
}

func ptrOf[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
