package fakedriver

import (
	"fmt"
	"slices"
	"sync"

	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Fault makes one call of one driver function fail.
type Fault struct {
	// Call is the function: a field of gpu.Calls ("MemAlloc",
	// "LaunchKernel") or Load for Driver.Load.
	Call string
	// N is the call that fails, counting from 1 since Inject.
	N int
	// Code is the result code the call returns instead of running.
	Code int32
}

func (f Fault) String() string { return fmt.Sprintf("%s #%d → %d", f.Call, f.N, f.Code) }

// Live counts what a driver's calls created and have not destroyed.
type Live struct {
	Streams, Events, Modules int
	Allocs                   int   // device allocations (MemAlloc, MemAllocAsync)
	AllocBytes               int64 // their bytes
	HostAllocs               int   // page-locked host allocations (HostAlloc)
	HostBytes                int64 // their bytes
	Graphs                   int   // captured graphs (StreamEndCapture)
	Execs                    int   // executable graphs (GraphInstantiate)
}

func (l Live) String() string {
	return fmt.Sprintf("%d streams, %d events, %d modules, %d allocations (%d B), %d host allocations (%d B), %d graphs, %d graph execs",
		l.Streams, l.Events, l.Modules, l.Allocs, l.AllocBytes, l.HostAllocs, l.HostBytes, l.Graphs, l.Execs)
}

// Injector counts the calls of one driver's functions, fails the calls its
// faults name, and keeps account of what successful calls create and
// destroy. Its methods are safe for concurrent use.
//
// A failed call that the runtime repeats at once fails again, as a real
// failure does: the runtime makes calls that name a stream without making
// the device current first where the driver allows it, and after any
// failure makes it current and repeats the call (gpu.Props.ContextChecked).
// So the next call but one after a fault, if the one between is
// MakeCurrent, fails with the fault's code when it is the same call with
// the same arguments. Calls of other goroutines in between end that
// window.
type Injector struct {
	mu     sync.Mutex
	names  [numCalls]string // the driver's name of each function
	counts [numCalls]int    // calls since Inject
	faults []Fault
	fired  []Fault
	retry  retry            // the last failed call, which a repeat fails again
	live   map[handle]int64 // live objects and their bytes
}

// retry is a failed call that fails again if repeated at once.
type retry struct {
	c       call
	a       args
	code    int32
	pending bool // the failure was the last call
	current bool // and MakeCurrent came after it
}

// handle is one live object: its kind and the driver's handle or address
// (kinds keep a stream and an allocation at the same value apart).
type handle struct {
	kind call // the call that created it
	h    uintptr
}

func newInjector() *Injector { return &Injector{live: map[handle]int64{}} }

// Inject replaces the faults with these and restarts the call counts.
// A fault naming no driver function panics: it is a mistake in the test.
func (in *Injector) Inject(faults ...Fault) {
	for _, f := range faults {
		if _, ok := callNamed(f.Call); !ok || f.N < 1 {
			panic(fmt.Sprintf("fakedriver: Inject(%v): no such call, or N < 1", f))
		}
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.faults = slices.Clone(faults)
	in.fired = nil
	in.counts = [numCalls]int{}
	in.retry = retry{}
}

// Reset removes the faults and restarts the call counts.
func (in *Injector) Reset() { in.Inject() }

// Count is the number of calls of the function named call (as in Fault)
// since Inject, those that failed included.
func (in *Injector) Count(call string) int {
	c, ok := callNamed(call)
	if !ok {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.counts[c]
}

// Counts are the calls of every function since Inject, by name as in
// Fault; functions not called are left out.
func (in *Injector) Counts() map[string]int {
	in.mu.Lock()
	defer in.mu.Unlock()
	m := map[string]int{}
	for c, n := range in.counts {
		if n > 0 {
			m[calls[c].field] = n
		}
	}
	return m
}

// Total is the number of calls of all functions since Inject.
func (in *Injector) Total() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, k := range in.counts {
		n += k
	}
	return n
}

// Fired are the faults that failed a call since Inject.
func (in *Injector) Fired() []Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	return slices.Clone(in.fired)
}

// Name is the driver's name of the function named call (as in Fault):
// what an error of that function names. Load is named "Load" unless the
// driver gives it a name of its own.
func (in *Injector) Name(call string) string {
	c, ok := callNamed(call)
	if !ok {
		return ""
	}
	return in.names[c]
}

// Live counts the streams, events, modules and allocations that calls
// through the Injector created and have not destroyed.
func (in *Injector) Live() Live {
	in.mu.Lock()
	defer in.mu.Unlock()
	var l Live
	for h, bytes := range in.live {
		switch h.kind {
		case cStreamCreate:
			l.Streams++
		case cEventCreate:
			l.Events++
		case cLoad:
			l.Modules++
		case cMemAlloc:
			l.Allocs++
			l.AllocBytes += bytes
		case cHostAlloc:
			l.HostAllocs++
			l.HostBytes += bytes
		case cStreamEndCapture:
			l.Graphs++
		case cGraphInstantiate:
			l.Execs++
		}
	}
	return l
}

// fire counts a call of c with arguments a and reports the code of the
// fault it triggers, or of the failed call it repeats.
func (in *Injector) fire(c call, a *args) (int32, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.counts[c]++
	r := &in.retry
	switch {
	case !r.pending:
	case c == cMakeCurrent && !r.current:
		r.current = true
	case r.current && c == r.c && *a == r.a:
		r.pending = false
		return r.code, true
	default:
		r.pending = false
	}
	for _, f := range in.faults {
		if f.Call == calls[c].field && f.N == in.counts[c] {
			in.fired = append(in.fired, f)
			*r = retry{c: c, a: *a, code: f.Code, pending: true}
			return f.Code, true
		}
	}
	return 0, false
}

// observe notes what a successful call of c created or destroyed, reading
// created handles from the call's out-parameter.
func (in *Injector) observe(c call, a *args) {
	kind, h, bytes, create := c, uintptr(0), int64(0), true
	switch c {
	case cStreamCreate, cEventCreate:
		h = *(*uintptr)(ptr(a[0]))
	case cMemAlloc, cMemAllocAsync:
		kind, h, bytes = cMemAlloc, uintptr(*(*uint64)(ptr(a[0]))), int64(a[1])
	case cHostAlloc:
		h, bytes = *(*uintptr)(ptr(a[0])), int64(a[1])
	case cLoad:
		h = a[0]
	case cStreamEndCapture:
		h = *(*uintptr)(ptr(a[1]))
	case cGraphInstantiate:
		h = *(*uintptr)(ptr(a[0]))
	case cGraphDestroy:
		kind, h, create = cStreamEndCapture, a[0], false
	case cGraphExecDestroy:
		kind, h, create = cGraphInstantiate, a[0], false
	case cStreamDestroy:
		kind, h, create = cStreamCreate, a[0], false
	case cEventDestroy:
		kind, h, create = cEventCreate, a[0], false
	case cMemFree, cMemFreeAsync:
		kind, h, create = cMemAlloc, a[0], false
	case cHostFree:
		kind, h, create = cHostAlloc, a[0], false
	case cModuleUnload:
		kind, h, create = cLoad, a[0], false
	default:
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if create {
		in.live[handle{kind, h}] = bytes
	} else {
		// An object made before the Injector saw its driver is not
		// counted, so its release is not either.
		delete(in.live, handle{kind, h})
	}
}

// gone drops one live allocation that the driver freed by itself: memory
// a graph allocated and never freed, released with the graph.
func (in *Injector) gone(addr uintptr) {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.live, handle{cMemAlloc, addr})
}

// forget drops every live object: the context they lived in was reset.
func (in *Injector) forget() {
	in.mu.Lock()
	defer in.mu.Unlock()
	clear(in.live)
}

// CodeFor returns a result code that drv classifies as class: the
// smallest positive one that is not the driver's "not ready". Tests use
// it to inject faults by meaning into any driver.
func CodeFor(drv gpu.Driver, class gpu.Class) (int32, bool) {
	notReady := drv.Codes().NotReady
	for code := int32(1); code < 10000; code++ {
		if code != notReady && drv.Classify(code) == class {
			return code, true
		}
	}
	return 0, false
}

// Calls lists the names a Fault may give: the gpu.Calls fields, then Load.
func Calls() []string {
	names := make([]string, 0, numCalls)
	for c := range numCalls {
		names = append(names, calls[c].field)
	}
	return names
}
