package gpu

import (
	"errors"
	"fmt"
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
	maxBlocks int     // the grid of a grid-stride launch: every unit full
	slotOff   int     // index of Slots[0] in the launch's value block
	fn        uintptr // the entry's function handle
}

// loadedModule is device code loaded into the device's context: one per
// Compile. Package qd caches modules per Program by the plan's hash and
// keeps them until the Program closes, so Compile always builds and loads.
type loadedModule struct {
	d         *Device
	h         uintptr // the driver's module handle; 0 once unloaded
	tasks     []task
	numTemps  int
	nslots    int         // value slots over all tasks
	nparams   int         // kernel parameters (length of the HostTotal inputs)
	totals    bool        // some task sizes its grid by HostTotal
	shapes    bool        // ... and reads array shapes for it
	tempSlots []int       // value slots that hold the temporaries' address
	bounds    bool        // indices checked: launches carry a violation record
	dependent bool        // captured launches are programmatic dependent ones (launch.go)
	sites     []kabi.Site // the checked accesses, by record site number
	kernel    string      // the kernel's name, for violation reports
	launches  sync.Pool
	closed    atomic.Bool
}

var _ backend.Module = (*loadedModule)(nil)

// Compile builds device code for plan through the driver, loads it and
// finds every task's entry.
func (d *Device) Compile(plan *lower.Plan, opts backend.CompileOptions) (backend.Module, error) {
	if plan == nil || plan.Kernel == nil {
		return nil, fmt.Errorf("%s: Compile of a nil plan", d.Arch())
	}
	if d.closed.Load() {
		return nil, ErrDeviceClosed
	}
	img, err := d.drv.Build(plan, d.props, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: compiling kernel %s: %w", d.Arch(), plan.Kernel.Name, err)
	}
	m, err := d.load(img)
	if err != nil {
		return nil, err
	}
	m.kernel = plan.Kernel.Name
	return m, nil
}

// load loads img and resolves its tasks.
func (d *Device) load(img *Image) (*loadedModule, error) {
	m := &loadedModule{d: d, numTemps: img.Layout.NumTemps, nparams: img.Layout.NumParams, bounds: img.Layout.Bounds, sites: img.Layout.Sites,
		dependent: img.Layout.AwaitsPredecessors && d.dependentLaunches()}
	for _, t := range img.Layout.Tasks {
		m.tasks = append(m.tasks, task{Task: t})
	}
	if err := m.layout(d); err != nil {
		return nil, err
	}
	if err := d.enter(); err != nil {
		return nil, err
	}
	defer d.leave()
	h, err := d.drv.Load(img)
	if err != nil {
		// A load returns the sticky error of an earlier fault like any
		// other call: it loses the device too.
		var de *DriverError
		if errors.As(err, &de) && de.Class == Fatal {
			d.markLost(de)
		}
		return nil, err
	}
	m.h = h
	for i := range m.tasks {
		t := &m.tasks[i]
		name := CString(t.Entry)
		var fn uintptr
		r := res(purego.SyscallN(d.c.ModuleGetFunction.Addr, uintptr(unsafe.Pointer(&fn)), h, uintptr(unsafe.Pointer(&name[0]))))
		if err := d.check(&d.c.ModuleGetFunction, r); err != nil {
			d.mu.Lock()
			m.unloadLocked()
			d.mu.Unlock()
			return nil, fmt.Errorf("%s: entry %q: %w", d.Arch(), t.Entry, err)
		}
		if d.c.FuncLoad.Addr != 0 {
			// Loaded now, while the host waits anyway (Compile), rather
			// than by the kernel's first launch.
			r := res(purego.SyscallN(d.c.FuncLoad.Addr, fn))
			if err := d.check(&d.c.FuncLoad, r); err != nil {
				d.mu.Lock()
				m.unloadLocked()
				d.mu.Unlock()
				return nil, fmt.Errorf("%s: entry %q: %w", d.Arch(), t.Entry, err)
			}
		}
		t.fn = fn
	}
	m.launches.New = func() any { return m.newLaunch() }
	d.mu.Lock()
	d.modules[m] = struct{}{}
	d.mu.Unlock()
	return m, nil
}

// layout checks the tasks and assigns their value slots and grid caps.
func (m *loadedModule) layout(d *Device) error {
	n := 0
	for i := range m.tasks {
		t := &m.tasks[i]
		if t.Kind == lower.Serial {
			t.BlockDim = 1
		}
		if t.BlockSize != nil && t.BlockDim == 0 {
			// A block loop sized by the launch: checked and capped then.
			m.totals = true
			m.shapes = m.shapes || t.TotalShapes
		} else if t.BlockDim < 1 || t.BlockDim > d.props.MaxBlockDim {
			return fmt.Errorf("%s: task %d (%s): block size %d outside 1..%d", d.Arch(), i, t.Entry, t.BlockDim, d.props.MaxBlockDim)
		}
		m.totals = m.totals || (t.Kind != lower.Serial && t.HostTotal != nil)
		m.shapes = m.shapes || (t.Kind != lower.Serial && t.HostTotal != nil && t.TotalShapes)
		t.maxBlocks = kabi.MaxBlocks(d.props.Units, d.props.ThreadsPerUnit, max(t.BlockDim, 1), t.Waves)
		t.slotOff = n
		for j, s := range t.Slots {
			switch s.Kind {
			case kabi.ScalarSlot, kabi.ArraySlot, kabi.DimSlot:
				if s.Param < 0 || s.Param >= m.nparams {
					return fmt.Errorf("%s: task %d (%s): slot %d names parameter %d of %d", d.Arch(), i, t.Entry, j, s.Param, m.nparams)
				}
			case kabi.TempsSlot:
				m.tempSlots = append(m.tempSlots, n+j)
			default:
				return fmt.Errorf("%s: task %d (%s): slot %d has unknown kind %d", d.Arch(), i, t.Entry, j, s.Kind)
			}
			if s.Size != 4 && s.Size != 8 {
				return fmt.Errorf("%s: task %d (%s): slot %d has size %d, want 4 or 8", d.Arch(), i, t.Entry, j, s.Size)
			}
			if s.Kind == kabi.DimSlot && (s.Dim < 0 || s.Dim >= len(backend.ArrayArg{}.Shape)) {
				return fmt.Errorf("%s: task %d (%s): slot %d has dimension %d", d.Arch(), i, t.Entry, j, s.Dim)
			}
		}
		n += len(t.Slots)
	}
	m.nslots = n
	return nil
}

// Close unloads the module. Package qd calls it only when no enqueued
// work uses the module (at Program.Close, after waiting for all work).
// Close is idempotent.
func (m *loadedModule) Close() error {
	if !m.closed.CompareAndSwap(false, true) {
		return nil
	}
	d := m.d
	if err := d.enter(); err != nil {
		if errors.Is(err, ErrDeviceClosed) || errors.Is(err, backend.ErrDeviceLost) {
			return nil // Device.Close unloads it, or the lost context goes with it
		}
		return err
	}
	defer d.leave()
	d.mu.Lock()
	defer d.mu.Unlock()
	return m.unloadLocked()
}

// unloadLocked runs inside enter/leave with d.mu held.
func (m *loadedModule) unloadLocked() error {
	d := m.d
	delete(d.modules, m)
	if m.h == 0 {
		return nil
	}
	err := d.call1(&d.c.ModuleUnload, m.h)
	m.h = 0
	return err
}
