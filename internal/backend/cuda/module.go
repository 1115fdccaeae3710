package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/kabi"
	"github.com/quadrants-go/qd/internal/lower"
)

// task is one entry of a loaded module: its layout and what loading added.
type task struct {
	kabi.Task
	maxBlocks int     // the grid of a grid-stride launch: every SM full
	slotOff   int     // index of Slots[0] in the launch's value block
	fn        uintptr // CUfunction
}

// compiled is what the code generator hands the device: the PTX text and
// the tasks (fn, maxBlocks and slotOff not yet set).
type compiled struct {
	ptx      string
	tasks    []task
	numTemps int
}

// loadedModule is a module loaded into the device's context. It is shared
// by every Compile of the same plan (same ir.Hash) and unloaded by
// Device.Close.
type loadedModule struct {
	d         *device
	h         uintptr // CUmodule
	tasks     []task
	numTemps  int
	nslots    int   // value slots over all tasks
	nparams   int   // kernel parameters (length of the HostTotal inputs)
	tempSlots []int // value slots that hold the temporaries' address
	jitInfo   string
	launches  sync.Pool // *launch blocks sized for this module
}

// moduleEntry is a cache entry: the first Compile of a hash builds the
// module, concurrent ones wait for it.
type moduleEntry struct {
	once sync.Once
	mod  *loadedModule
	err  error
}

// moduleHandle is what Compile returns. Module caching: loaded modules live
// until Device.Close (a later Compile of the same plan then costs a map
// lookup, and no handle can see its CUmodule unloaded under a launch);
// closing a handle only stops its own use.
type moduleHandle struct {
	m      *loadedModule
	closed atomic.Bool
}

func (h *moduleHandle) Close() error {
	h.closed.Store(true)
	return nil
}

// Compile generates PTX for plan, JIT-loads it and finds every task's
// function, or returns the module already loaded for plan.Hash.
func (d *device) Compile(plan *lower.Plan) (backend.Module, error) {
	if plan == nil || plan.Kernel == nil {
		return nil, errors.New("cuda: Compile of a nil plan")
	}
	if d.closed.Load() {
		return nil, ErrDeviceClosed
	}
	d.mu.Lock()
	e := d.modules[plan.Hash]
	if e == nil {
		e = &moduleEntry{}
		d.modules[plan.Hash] = e
	}
	d.mu.Unlock()
	e.once.Do(func() { e.mod, e.err = d.build(plan) })
	if e.err != nil {
		// Forget failures: the next Compile tries again (an out-of-memory
		// JIT may succeed later; a bad plan fails the same way).
		d.mu.Lock()
		if d.modules[plan.Hash] == e {
			delete(d.modules, plan.Hash)
		}
		d.mu.Unlock()
		return nil, e.err
	}
	return &moduleHandle{m: e.mod}, nil
}

func (d *device) build(plan *lower.Plan) (*loadedModule, error) {
	c, err := generate(plan, d.ccMajor*10+d.ccMinor, d.drv.version)
	if err != nil {
		return nil, fmt.Errorf("cuda: compiling kernel %s: %w", plan.Kernel.Name, err)
	}
	return d.load(c, len(plan.Kernel.Params))
}

// load JIT-loads c and resolves its tasks.
func (d *device) load(c *compiled, nparams int) (*loadedModule, error) {
	m := &loadedModule{d: d, tasks: c.tasks, numTemps: c.numTemps, nparams: nparams}
	if err := m.layout(d); err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	h, info, err := d.loadPTX(c.ptx)
	if err != nil {
		return nil, err
	}
	m.h, m.jitInfo = h, info
	for i := range m.tasks {
		t := &m.tasks[i]
		name := cString(t.Entry)
		var fn uintptr
		r := callRes(purego.SyscallN(d.sym.moduleGetFunction, uintptr(unsafe.Pointer(&fn)), h, uintptr(unsafe.Pointer(&name[0]))))
		if err := d.check("cuModuleGetFunction", r); err != nil {
			m.unload()
			return nil, fmt.Errorf("cuda: entry %q: %w", t.Entry, err)
		}
		t.fn = fn
	}
	m.launches.New = func() any { return m.newLaunch() }
	return m, nil
}

// layout checks the tasks and assigns their value slots and grid caps.
func (m *loadedModule) layout(d *device) error {
	n := 0
	for i := range m.tasks {
		t := &m.tasks[i]
		if t.Kind == lower.Serial {
			t.BlockDim = 1
		}
		if t.BlockDim < 1 || t.BlockDim > d.maxBlockDim {
			return fmt.Errorf("cuda: task %d (%s): block size %d outside 1..%d", i, t.Entry, t.BlockDim, d.maxBlockDim)
		}
		t.maxBlocks = kabi.MaxBlocks(d.smCount, d.maxThreadsSM, t.BlockDim)
		t.slotOff = n
		for j, s := range t.Slots {
			switch s.Kind {
			case kabi.ScalarSlot, kabi.ArraySlot, kabi.DimSlot:
				if s.Param < 0 || s.Param >= m.nparams {
					return fmt.Errorf("cuda: task %d (%s): slot %d names parameter %d of %d", i, t.Entry, j, s.Param, m.nparams)
				}
			case kabi.TempsSlot:
				m.tempSlots = append(m.tempSlots, n+j)
			default:
				return fmt.Errorf("cuda: task %d (%s): slot %d has unknown kind %d", i, t.Entry, j, s.Kind)
			}
			if s.Size != 4 && s.Size != 8 {
				return fmt.Errorf("cuda: task %d (%s): slot %d has size %d, want 4 or 8", i, t.Entry, j, s.Size)
			}
			if s.Kind == kabi.DimSlot && (s.Dim < 0 || s.Dim > 2) {
				return fmt.Errorf("cuda: task %d (%s): slot %d has dimension %d", i, t.Entry, j, s.Dim)
			}
		}
		n += len(t.Slots)
	}
	m.nslots = n
	return nil
}

// CUjit_option values (cuda.h).
const (
	jitInfoLogBuffer      = 3
	jitInfoLogBufferSize  = 4
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
)

// jitBuffers holds what cuModuleLoadDataEx reads and writes through
// pointers. It is pinned for the call: the option values array carries the
// log buffers' addresses as plain integers, which the collector does not
// trace, so the object must be kept alive and unmoved explicitly.
type jitBuffers struct {
	opts    [4]int32
	vals    [4]uintptr
	errLog  [16 << 10]byte
	infoLog [8 << 10]byte
}

// loadPTX runs inside enter/leave. It returns the module and the JIT's
// info log; a failure carries the JIT's error log in DriverError.Log.
func (d *device) loadPTX(text string) (uintptr, string, error) {
	image := cString(text) // the driver finds the end of PTX text by its NUL
	j := new(jitBuffers)
	var pin runtime.Pinner
	pin.Pin(j)
	defer pin.Unpin()
	j.opts = [4]int32{jitErrorLogBuffer, jitErrorLogBufferSize, jitInfoLogBuffer, jitInfoLogBufferSize}
	j.vals = [4]uintptr{
		uintptr(unsafe.Pointer(&j.errLog[0])), uintptr(len(j.errLog)),
		uintptr(unsafe.Pointer(&j.infoLog[0])), uintptr(len(j.infoLog)),
	}
	var h uintptr
	r := callRes(purego.SyscallN(d.sym.moduleLoadDataEx,
		uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&image[0])),
		uintptr(len(j.opts)), uintptr(unsafe.Pointer(&j.opts[0])), uintptr(unsafe.Pointer(&j.vals[0]))))
	runtime.KeepAlive(image)
	info := strings.TrimSpace(cBytes(j.infoLog[:]))
	if r != cudaSuccess {
		err := d.check("cuModuleLoadDataEx", r)
		if de, ok := err.(*DriverError); ok {
			de.Log = strings.TrimSpace(cBytes(j.errLog[:]))
		}
		return 0, info, err
	}
	return h, info, nil
}

// cBytes returns b up to its first NUL.
func cBytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// unload runs inside enter/leave (Device.Close, or a failed load).
func (m *loadedModule) unload() error {
	d := m.d
	if m.h == 0 {
		return nil
	}
	err := d.check("cuModuleUnload", call1(d.sym.moduleUnload, m.h))
	m.h = 0
	return err
}
