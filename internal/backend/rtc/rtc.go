// Package rtc drives a runtime compiler of GPU source with NVRTC's API,
// which hiprtc copies call for call: create a program from source, compile
// it with options, read its log and its code, destroy it. The CUDA backend
// (NVRTC, for QD_CUDA_CODEGEN=csrc) and the HIP backend (hiprtc) bind the
// same table under their own names and share the driving code and its
// errors.
package rtc

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Calls are the compiler's functions. Each field's comment gives the C
// signature shared by nvrtc* and hiprtc* (a program handle is a pointer;
// results are a C enum, 0 for success).
type Calls struct {
	Create   gpu.Fn // CreateProgram(prog*, src *char, name *char, numHeaders int, headers **char, includeNames **char)
	Compile  gpu.Fn // CompileProgram(prog, numOptions int, options **char)
	LogSize  gpu.Fn // GetProgramLogSize(prog, size_t*)
	Log      gpu.Fn // GetProgramLog(prog, char*)
	CodeSize gpu.Fn // the code's size (GetCodeSize, GetPTXSize): (prog, size_t*)
	Code     gpu.Fn // the code (GetCode, GetPTX): (prog, char*)
	Destroy  gpu.Fn // DestroyProgram(prog*)
	ErrorStr gpu.Fn // GetErrorString(result) const char*
	Version  gpu.Fn // Version(major*, minor*); optional
}

// Bindings binds the calls as prefix+"CreateProgram", ... ("nvrtc",
// "hiprtc"); codeSize and code name the functions that return the compiled
// code ("GetCodeSize"/"GetCode", "GetPTXSize"/"GetPTX").
func (c *Calls) Bindings(prefix, codeSize, code string) []gpu.Binding {
	b := func(f *gpu.Fn, name string) gpu.Binding { return gpu.Binding{Fn: f, Names: []string{prefix + name}} }
	v := b(&c.Version, "Version")
	v.Optional = true
	return []gpu.Binding{
		b(&c.Create, "CreateProgram"), b(&c.Compile, "CompileProgram"),
		b(&c.LogSize, "GetProgramLogSize"), b(&c.Log, "GetProgramLog"),
		b(&c.CodeSize, codeSize), b(&c.Code, code),
		b(&c.Destroy, "DestroyProgram"), b(&c.ErrorStr, "GetErrorString"), v,
	}
}

// errCompilation is NVRTC_ERROR_COMPILATION and HIPRTC_ERROR_COMPILATION:
// the source did not compile (the log says why).
const errCompilation = 6

// Compiler is a bound runtime compiler.
type Compiler struct {
	Arch  string // the backend, for errors: "cuda", "amdgpu"
	Calls Calls
}

// Version returns the compiler's "major.minor", or "" when it does not say.
func (c *Compiler) Version() string {
	if !c.Calls.Version.Bound() {
		return ""
	}
	var major, minor int32
	if gpu.Call(&c.Calls.Version, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))) != 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

// Run compiles src (its name is used in diagnostics) with opts and returns
// the code and the compiler's log. A failure is a *gpu.DriverError naming
// the function that failed, with the log; a source that does not compile
// is of class gpu.InvalidCode (errors.Is gpu.ErrInvalidCode).
func (c *Compiler) Run(src, name string, opts []string) (code []byte, log string, err error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	cstr := func(s string) uintptr {
		b := gpu.CString(s)
		pin.Pin(&b[0])
		return uintptr(unsafe.Pointer(&b[0]))
	}
	var prog uintptr
	if r := gpu.Call(&c.Calls.Create, uintptr(unsafe.Pointer(&prog)), cstr(src), cstr(name), 0, 0, 0); r != 0 {
		return nil, "", c.error(&c.Calls.Create, r, "")
	}
	defer gpu.Call(&c.Calls.Destroy, uintptr(unsafe.Pointer(&prog)))

	ptrs := make([]uintptr, len(opts)+1) // never empty: its address is passed
	for i, o := range opts {
		ptrs[i] = cstr(o)
	}
	r := gpu.Call(&c.Calls.Compile, prog, uintptr(len(opts)), uintptr(unsafe.Pointer(&ptrs[0])))
	runtime.KeepAlive(ptrs)
	log = c.read(prog, &c.Calls.LogSize, &c.Calls.Log, true)
	if r != 0 {
		return nil, log, c.error(&c.Calls.Compile, r, log)
	}
	code = []byte(c.read(prog, &c.Calls.CodeSize, &c.Calls.Code, false))
	if len(code) == 0 {
		return nil, log, fmt.Errorf("%s: %s returned no code", c.Arch, c.Calls.Code.Name)
	}
	return code, log, nil
}

// read fetches a size-then-bytes result (the log, the code); text results
// lose their terminating NUL.
func (c *Compiler) read(prog uintptr, size, get *gpu.Fn, text bool) string {
	var n uint64
	if gpu.Call(size, prog, uintptr(unsafe.Pointer(&n))) != 0 || n == 0 {
		return ""
	}
	buf := make([]byte, n)
	if gpu.Call(get, prog, uintptr(unsafe.Pointer(&buf[0]))) != 0 {
		return ""
	}
	if text {
		return strings.TrimSpace(gpu.CBytes(buf))
	}
	return string(buf)
}

// error is the DriverError of result r of fn, with the compiler's log.
func (c *Compiler) error(fn *gpu.Fn, r int32, log string) *gpu.DriverError {
	e := &gpu.DriverError{Arch: c.Arch, Op: fn.Name, Code: r, Log: log, Class: gpu.Failed}
	if r == errCompilation {
		e.Class = gpu.InvalidCode
	}
	if c.Calls.ErrorStr.Bound() {
		var p *byte
		r1, _, _ := purego.SyscallN(c.Calls.ErrorStr.Addr, uintptr(r))
		// The compiler returns a pointer to a static C string; read it
		// through a **byte so that no uintptr becomes a pointer here.
		p = *(**byte)(unsafe.Pointer(&r1))
		e.Name = gpu.GoString(p)
	}
	return e
}
