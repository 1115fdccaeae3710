package fakedriver

import (
	"math"
	"sort"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/kabi"
)

// sim runs one call on the simulated device. Work is done when it is
// enqueued, under the driver's lock, so copies made by one goroutine
// happen before (for the race detector too) a synchronization that
// another goroutine makes afterwards.
func (d *Driver) sim(c call, a *args) int32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clock++
	// A faulted context can still be made current; every call on it fails.
	if d.poisoned != 0 && c != cMakeCurrent {
		return d.poisoned
	}
	if c == cEventRecordWithFlags {
		switch {
		case a[2] != 0 && a[2] != recordExternal:
			return d.misuse(c, CodeInvalidValue, "flags %#x", a[2])
		case a[2] == recordExternal && d.caps[a[1]] == nil:
			return d.misuse(c, CodeInvalidValue, "an external record on stream %#x, which is not capturing", a[1])
		case a[2] == 0:
			c = cEventRecord
		}
	}
	if c == cLaunchKernelEx {
		if r := d.dependentLaunch(a); r != 0 {
			return r
		}
		c = cLaunchKernel
	}
	if r, ok := d.simCapture(c, a); ok {
		return r
	}
	switch c {
	case cMakeCurrent:
		if d.ctx == 0 || a[0] != d.ctx {
			return d.misuse(c, CodeInvalidContext, "context %#x is not the open device's (%#x)", a[0], d.ctx)
		}
	case cSynchronize:
	case cStreamCreate:
		if a[1] != 0 && a[1] != 1 {
			return d.misuse(c, CodeInvalidValue, "flags %#x", a[1])
		}
		h := d.newHandle()
		d.streams[h] = true
		*(*uintptr)(ptr(a[0])) = h
	case cStreamDestroy:
		if !d.streams[a[0]] {
			return d.misuse(c, CodeInvalidHandle, "stream %#x is not live", a[0])
		}
		delete(d.streams, a[0])
	case cStreamSynchronize, cStreamQuery:
		return d.stream(c, a[0])
	case cStreamWaitEvent:
		if r := d.stream(c, a[0]); r != 0 {
			return r
		}
		e, r := d.event(c, a[1])
		if r != 0 {
			return r
		}
		if a[2] != 0 {
			return d.misuse(c, CodeInvalidValue, "flags %#x", a[2])
		}
		return d.waitCaptured(a[0], e)
	case cEventCreate:
		if a[1]&^2 != 0 {
			return d.misuse(c, CodeInvalidValue, "flags %#x", a[1])
		}
		h := d.newHandle()
		d.events[h] = &event{timing: a[1]&2 == 0}
		*(*uintptr)(ptr(a[0])) = h
	case cEventDestroy:
		if _, r := d.event(c, a[0]); r != 0 {
			return r
		}
		delete(d.events, a[0])
	case cEventRecord:
		e, r := d.event(c, a[0])
		if r == 0 {
			r = d.stream(c, a[1])
		}
		if r != 0 {
			return r
		}
		if e.cap != nil && !e.cap.ended && d.caps[a[1]] != e.cap {
			// CUDA crashed on this (an H100, a pooled event recorded in
			// one goroutine's capture and by another outside it).
			return d.misuse(c, CodeStreamCaptureUnsupported, "event %#x marks a capture in progress and is recorded outside it", a[0])
		}
		d.recordEvent(e, a[1])
	case cEventQuery, cEventSynchronize:
		e, r := d.event(c, a[0])
		if r == 0 && e.cap != nil && !e.cap.ended {
			return d.misuse(c, CodeStreamCaptureUnsupported, "event %#x was recorded in a capture in progress", a[0])
		}
		return r
	case cEventElapsed:
		return d.elapsed(a)
	case cMemAlloc:
		return d.dev.alloc(d, c, a[0], a[1])
	case cMemAllocAsync:
		if r := d.stream(c, a[2]); r != 0 {
			return r
		}
		return d.dev.alloc(d, c, a[0], a[1])
	case cMemFree:
		return d.dev.free(d, c, a[0])
	case cMemFreeAsync:
		if r := d.stream(c, a[1]); r != 0 {
			return r
		}
		return d.dev.free(d, c, a[0])
	case cCopyHtoDAsync, cCopyDtoHAsync, cCopyDtoDAsync, cMemsetD8Async, cMemsetD16Async, cMemsetD32Async:
		return d.transfer(c, a, true)
	case cHostAlloc:
		if a[2]&^1 != 0 {
			return d.misuse(c, CodeInvalidValue, "flags %#x", a[2])
		}
		return d.host.alloc(d, c, a[0], a[1])
	case cHostFree:
		return d.host.free(d, c, a[0])
	case cModuleGetFunction:
		m := d.modules[a[1]]
		if m == nil {
			return d.misuse(c, CodeInvalidHandle, "module %#x is not live", a[1])
		}
		f, ok := m.funcs[gpu.GoString((*byte)(ptr(a[2])))]
		if !ok {
			return CodeNotFound // a real answer, not a misuse: the caller asked by name
		}
		*(*uintptr)(ptr(a[0])) = f
	case cFuncLoad:
		// Functions are whole from ModuleGetFunction on: a check only.
		if _, ok := d.funcs[a[0]]; !ok {
			return d.misuse(c, CodeInvalidHandle, "function %#x is not live", a[0])
		}
	case cModuleUnload:
		m := d.modules[a[0]]
		if m == nil {
			return d.misuse(c, CodeInvalidHandle, "module %#x is not live", a[0])
		}
		for _, f := range m.funcs {
			delete(d.funcs, f)
		}
		delete(d.modules, a[0])
	case cLaunchKernel:
		return d.launch(a)
	case cCanAccessPeer, cEnablePeerAccess, cCopyPeerAsync, cMemPoolSetAccess:
		return d.peer(c, a)
	default:
		return d.misuse(c, CodeNotSupported, "not simulated")
	}
	return 0
}

// Special stream handles every call accepts: the legacy and per-thread
// default streams (0 and 1 both name the legacy one, as in CUDA).
const (
	streamLegacy    = 1
	streamPerThread = 2
)

// stream checks that h is a live stream or a default one.
func (d *Driver) stream(c call, h uintptr) int32 {
	if h == 0 || h == streamLegacy || h == streamPerThread || d.streams[h] {
		return 0
	}
	return d.misuse(c, CodeInvalidHandle, "stream %#x is not live", h)
}

func (d *Driver) event(c call, h uintptr) (*event, int32) {
	if e := d.events[h]; e != nil {
		return e, 0
	}
	return nil, d.misuse(c, CodeInvalidHandle, "event %#x is not live", h)
}

// elapsed writes (ms *f32, start, end): a microsecond per tick of the
// clock between the two records, a small positive time when end was
// recorded after start.
func (d *Driver) elapsed(a *args) int32 {
	start, r := d.event(cEventElapsed, a[1])
	if r != 0 {
		return r
	}
	end, r := d.event(cEventElapsed, a[2])
	if r != 0 {
		return r
	}
	if !start.timing || !end.timing || start.at == 0 || end.at == 0 {
		// The runtime checks both before asking: asking anyway is a misuse.
		return d.misuse(cEventElapsed, CodeInvalidHandle, "events %#x, %#x: not both timing and recorded", a[1], a[2])
	}
	*(*float32)(ptr(a[0])) = float32(end.at-start.at) * 1e-3
	return 0
}

// transfer runs CopyHtoDAsync (dst, src host*, bytes, stream), CopyDtoHAsync
// (dst host*, src, bytes, stream), CopyDtoDAsync (dst, src, bytes, stream)
// and the memsets MemsetD8Async (dst, value, bytes, stream), MemsetD16Async
// and MemsetD32Async (dst, value, count of 2- or 4-byte words, stream);
// with run false it only checks them (a capture records them, graph.go).
func (d *Driver) transfer(c call, a *args, run bool) int32 {
	n := a[2]
	if r := d.stream(c, a[3]); r != 0 {
		return r
	}
	if n > MemoryBytes {
		return d.misuse(c, CodeInvalidValue, "%d bytes", n)
	}
	var dst, src []byte
	var r int32
	switch c {
	case cCopyHtoDAsync:
		dst, r = d.dev.slice(d, c, a[0], int(n))
		if r == 0 {
			src, r = d.hostSlice(c, a[1], int(n))
		}
	case cCopyDtoHAsync:
		dst, r = d.hostSlice(c, a[0], int(n))
		if r == 0 {
			src, r = d.dev.slice(d, c, a[1], int(n))
		}
	case cCopyDtoDAsync:
		dst, r = d.dev.slice(d, c, a[0], int(n))
		if r == 0 {
			src, r = d.dev.slice(d, c, a[1], int(n))
		}
	case cMemsetD8Async:
		if dst, r = d.dev.slice(d, c, a[0], int(n)); r == 0 && run {
			set(dst, byte(a[1]))
		}
		return r
	case cMemsetD16Async, cMemsetD32Async:
		w := uintptr(2)
		if c == cMemsetD32Async {
			w = 4
		}
		if a[0]%w != 0 || n > MemoryBytes/w {
			return d.misuse(c, CodeInvalidValue, "%d words at %#x", n, a[0])
		}
		if dst, r = d.dev.slice(d, c, a[0], int(n)*int(w)); r == 0 && run {
			for i := 0; i < len(dst); i += int(w) {
				for j := range int(w) {
					dst[i+j] = byte(a[1] >> (8 * j))
				}
			}
		}
		return r
	}
	if r == 0 && run {
		copy(dst, src)
	}
	return r
}

// peer runs the calls between devices. The fake has one device, so the
// runtime, which copies within one context as CopyDtoDAsync does, only
// asks CanAccessPeer (no: there is no other device) or copies between two
// handles of the one context: CopyPeerAsync (dst, dstCtx, src, srcCtx,
// bytes, stream) works on it. Enabling access to a peer, or to a pool
// (the fake's Props name none), is a misuse.
func (d *Driver) peer(c call, a *args) int32 {
	switch c {
	case cCanAccessPeer:
		*(*int32)(ptr(a[0])) = 0
		return 0
	case cCopyPeerAsync:
		if a[1] != d.ctx || a[3] != d.ctx {
			return d.misuse(c, CodeInvalidContext, "contexts %#x and %#x: the open device's is %#x", a[1], a[3], d.ctx)
		}
		return d.transfer(cCopyDtoDAsync, &args{a[0], a[2], a[4], a[5]}, true)
	}
	return d.misuse(c, CodeInvalidValue, "the fake has one device and names no memory pool: there is nothing to enable")
}

// hostSlice is the host memory [addr, addr+n) of a copy: any memory of the
// process (page-locked or not, as the drivers allow for their
// asynchronous copies), but not the device's.
func (d *Driver) hostSlice(c call, addr uintptr, n int) ([]byte, int32) {
	if n == 0 {
		return nil, 0
	}
	if addr == 0 {
		return nil, d.misuse(c, CodeInvalidValue, "a nil host pointer")
	}
	if _, _, ok := d.dev.find(addr, 1); ok {
		return nil, d.misuse(c, CodeInvalidValue, "host pointer %#x is device memory (source and destination swapped?)", addr)
	}
	return unsafe.Slice((*byte)(ptr(addr)), n), 0
}

// launch checks LaunchKernel(f, gridX, gridY, gridZ, blockX, blockY,
// blockZ, sharedBytes, stream, params, extra) as a driver would, and every
// parameter against the entry's layout, then runs nothing.
func (d *Driver) launch(a *args) int32 {
	const c = cLaunchKernel
	f := d.funcs[a[0]]
	if f == nil {
		return d.misuse(c, CodeInvalidHandle, "function %#x is not live", a[0])
	}
	for i, limit := range [3]uintptr{math.MaxInt32, 65535, 65535} {
		if a[1+i] < 1 || a[1+i] > limit {
			return d.misuse(c, CodeInvalidValue, "%s: grid dimension %d is %d", f.task.Entry, i, a[1+i])
		}
	}
	if a[4] < 1 || a[5] < 1 || a[6] < 1 || a[4]*a[5]*a[6] > maxBlockDim || int(a[4]) != f.task.BlockDim {
		return d.misuse(c, CodeInvalidValue, "%s: block %d×%d×%d, the layout says %d", f.task.Entry, a[4], a[5], a[6], f.task.BlockDim)
	}
	if a[7] != 0 || a[10] != 0 {
		return d.misuse(c, CodeInvalidValue, "%s: shared memory %d, extra %#x", f.task.Entry, a[7], a[10])
	}
	if r := d.stream(c, a[8]); r != 0 {
		return r
	}
	slots := f.task.Slots
	if len(slots) == 0 {
		return 0
	}
	if a[9] == 0 {
		return d.misuse(c, CodeInvalidValue, "%s: no parameters for %d slots", f.task.Entry, len(slots))
	}
	params := unsafe.Slice((*uintptr)(ptr(a[9])), len(slots))
	for i, s := range slots {
		var v uint64
		if s.Size == 4 {
			v = uint64(*(*uint32)(ptr(params[i])))
		} else {
			v = *(*uint64)(ptr(params[i]))
		}
		if s.Kind != kabi.ArraySlot && s.Kind != kabi.TempsSlot {
			continue
		}
		if _, _, ok := d.dev.find(uintptr(v), 0); !ok {
			return d.misuse(c, CodeInvalidValue, "%s: slot %d (%v) is %#x, not live device memory", f.task.Entry, i, s.Kind, v)
		}
	}
	return 0
}

// memory is device or page-locked host memory: Go memory, kept reachable
// here while it is allocated, so that its addresses stay valid.
type memory struct {
	allocs []*block // by address
	bytes  int64
}

// block is one allocation: size bytes at base, inside mem.
type block struct {
	base uintptr
	size int
	mem  []byte // size bytes from base
}

// fill is what new memory holds: not zero, so that memory the runtime
// forgets to clear is seen. Past fillAll bytes only the first and last
// fillEnds hold it: touching every page of a large allocation that a test
// never reads costs more than the whole test.
const (
	fill     = 0xA5
	fillAll  = 1 << 20
	fillEnds = 4 << 10
)

// alloc runs (ptr*, bytes): 256-byte aligned memory, as the drivers give.
func (m *memory) alloc(d *Driver, c call, out, bytes uintptr) int32 {
	if bytes == 0 {
		return d.misuse(c, CodeInvalidValue, "0 bytes")
	}
	if bytes > MemoryBytes || m.bytes+int64(bytes) > MemoryBytes {
		return CodeOutOfMemory
	}
	raw := make([]byte, bytes+255)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	off := int(-start & 255)
	b := &block{base: start + uintptr(off), size: int(bytes), mem: raw[off : off+int(bytes)]}
	if len(b.mem) <= fillAll {
		set(b.mem, fill)
	} else {
		set(b.mem[:fillEnds], fill)
		set(b.mem[len(b.mem)-fillEnds:], fill)
	}
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].base > b.base })
	m.allocs = append(m.allocs, nil)
	copy(m.allocs[i+1:], m.allocs[i:])
	m.allocs[i] = b
	m.bytes += int64(bytes)
	*(*uintptr)(ptr(out)) = b.base
	return 0
}

// free runs (ptr): only the start of an allocation may be freed.
func (m *memory) free(d *Driver, c call, addr uintptr) int32 {
	b, off, ok := m.find(addr, 0)
	if !ok || off != 0 {
		return d.misuse(c, CodeInvalidValue, "%#x is not the start of an allocation", addr)
	}
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].base >= addr })
	m.allocs = append(m.allocs[:i], m.allocs[i+1:]...)
	m.bytes -= int64(b.size)
	return 0
}

// find returns the allocation holding [addr, addr+n) and addr's offset in
// it; n = 0 also matches the allocation's end.
func (m *memory) find(addr uintptr, n int) (*block, int, bool) {
	i := sort.Search(len(m.allocs), func(i int) bool { return m.allocs[i].base > addr }) - 1
	if i < 0 {
		return nil, 0, false
	}
	b := m.allocs[i]
	off := addr - b.base
	if off > uintptr(b.size) || uintptr(n) > uintptr(b.size)-off {
		return nil, 0, false
	}
	return b, int(off), true
}

// slice is the memory [addr, addr+n) of one allocation.
func (m *memory) slice(d *Driver, c call, addr uintptr, n int) ([]byte, int32) {
	b, off, ok := m.find(addr, n)
	if !ok {
		return nil, d.misuse(c, CodeInvalidValue, "[%#x, +%d) is not inside a live allocation", addr, n)
	}
	return b.mem[off : off+n], 0
}

func (m *memory) reset() { m.allocs, m.bytes = nil, 0 }

// set sets every byte of b to v, doubling what is set with each copy.
func set(b []byte, v byte) {
	if len(b) == 0 {
		return
	}
	b[0] = v
	for i := 1; i < len(b); i *= 2 {
		copy(b[i:], b[:i])
	}
}

// attrProgrammatic is the launch attribute of a programmatic dependent
// launch (CUDA's CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION).
const attrProgrammatic = 6

// dependentLaunch checks LaunchKernelEx(config, f, params, extra) and
// rewrites a into the LaunchKernel call it amounts to. The config is
// CUlaunchConfig: grid and block (3 × u32 each), shared bytes (u32), the
// stream at byte 32, the attributes at 40 and their count at 48; an
// attribute is 72 bytes, its id (u32) first and its value at byte 8. The
// only attribute accepted is a programmatic dependent launch, allowed,
// and only of an entry that waits for its predecessors: any other entry
// could read what they have not yet written.
func (d *Driver) dependentLaunch(a *args) int32 {
	const c = cLaunchKernelEx
	if a[0] == 0 {
		return d.misuse(c, CodeInvalidValue, "no launch configuration")
	}
	cfg := unsafe.Slice((*byte)(ptr(a[0])), 56)
	u32 := func(b []byte, off int) uint32 { return *(*uint32)(unsafe.Pointer(&b[off])) }
	word := func(b []byte, off int) uintptr { return *(*uintptr)(unsafe.Pointer(&b[off])) }
	f := d.funcs[a[1]]
	if f == nil {
		return d.misuse(c, CodeInvalidHandle, "function %#x is not live", a[1])
	}
	n := u32(cfg, 48)
	if n == 0 || word(cfg, 40) == 0 {
		return d.misuse(c, CodeInvalidValue, "%s: no attributes (LaunchKernel does that)", f.task.Entry)
	}
	attrs := unsafe.Slice((*byte)(ptr(word(cfg, 40))), 72*int(n))
	for i := range int(n) {
		at := attrs[72*i:]
		if id, v := u32(at, 0), u32(at, 8); id != attrProgrammatic || v != 1 {
			return d.misuse(c, CodeInvalidValue, "%s: attribute %d = %d, the fake knows only %d = 1", f.task.Entry, id, v, attrProgrammatic)
		}
	}
	if !f.awaits {
		return d.misuse(c, CodeInvalidValue, "%s: a programmatic dependent launch of an entry that does not wait for its predecessors", f.task.Entry)
	}
	fn, params, extra := a[1], a[2], a[3]
	*a = args{fn, uintptr(u32(cfg, 0)), uintptr(u32(cfg, 4)), uintptr(u32(cfg, 8)),
		uintptr(u32(cfg, 12)), uintptr(u32(cfg, 16)), uintptr(u32(cfg, 20)),
		uintptr(u32(cfg, 24)), word(cfg, 32), params, extra}
	return 0
}

// recordExternal is EventRecordWithFlags' flag for a record that is a
// node of the capture (CUDA's CU_EVENT_RECORD_EXTERNAL).
const recordExternal = 1
