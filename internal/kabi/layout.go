package kabi

import (
	"fmt"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// TotalFunc computes a parallel task's iteration count on the host from the
// launch's scalar arguments (ir.Const bit patterns, by parameter index) and
// array shapes (by parameter index); see HostTotal.
type TotalFunc func(scalars []uint64, shapes [][4]int) int64

// Task describes the device entry of one task of a plan.
type Task struct {
	Index    int    // position in the plan
	Entry    string // the entry's name: an ASCII identifier
	Kind     lower.TaskKind
	Group    int
	BlockDim int    // threads per block to launch with (1 for serial tasks)
	Slots    []Slot // the entry's parameters, in order
	// HostTotal is the parallel loop's iteration count from the launch's
	// arguments; nil for serial tasks and for loops whose extents read
	// memory or locals, which the kernel then finds itself (the grid is the
	// launcher's cap). Either way the kernel is correct for any grid size.
	HostTotal TotalFunc
	// TotalShapes: HostTotal reads array shapes (an extent takes a len),
	// so a launcher must pass them; otherwise it may pass none.
	TotalShapes bool
	// Waves is how many waves of blocks the task's grid may reach
	// (MaxBlocks); 0 means GridWaves. The code generator sets it where its
	// loop was measured to want another number.
	Waves int
	// PointsPerThread is how many points of the range a thread handles
	// when the grid is large enough (a row-chunked 2-D loop: a column of
	// rows): the grid is sized for total/PointsPerThread threads, so that
	// no block is launched with nothing to do; 0 means 1.
	PointsPerThread int
	// Block tasks (qd.Blocks): HostTotal counts blocks, not threads, and
	// the entry strides over blocks. BlockDim is the loop's constant size,
	// or 0 when the size comes from the launch's scalars: BlockSize then
	// computes it (a launcher refuses one outside 1..MaxBlockDim).
	// SharedBytes is the static shared memory the entry declares.
	BlockSize   TotalFunc
	SharedBytes int
}

// Module is the layout of one lowered kernel: the entries of its tasks and
// what a launch passes them.
type Module struct {
	Name      string // the kernel's name as an ASCII identifier
	Tasks     []Task // one per plan task, in plan order
	NumParams int    // the kernel's parameters (length of HostTotal's inputs)
	NumTemps  int    // per-launch temporaries, 8 bytes each
	// Bounds: the entries check every array index (Options.Bounds). The
	// launch's temporaries then end with a violation record of
	// DebugWords words after the NumTemps temporaries, zeroed by the
	// launcher before the first task: [site+1, index, extent, dimension] of
	// the first index out of range, site indexing Sites.
	Bounds bool
	// Sites are the array accesses the entries check, in the order the
	// code generator writes them; it registers each with AddSite.
	Sites []Site
	// AwaitsPredecessors: every entry, before it touches memory, waits
	// until the grids launched before it on its stream have completed and
	// their writes are visible. A launcher may then start such an entry
	// before its predecessor ends (a programmatic dependent launch), which
	// hides the launch latency between dependent kernels. It is
	// Options.AwaitsPredecessors, and the code generator writes the wait
	// when it is set.
	AwaitsPredecessors bool
}

// Options change the layout.
type Options struct {
	// Bounds makes entries check array indices (qd.WithDebug): every
	// array a task indexes passes all its extents, and every task that
	// indexes one takes the temporaries, where it records a violation.
	Bounds bool
	// AwaitsPredecessors makes every entry wait for its predecessors
	// (Module.AwaitsPredecessors). The caller sets it only for a target
	// that has the wait (package ptx: sm_90 and later); a generator whose
	// target lacks it refuses the layout.
	AwaitsPredecessors bool
}

// Layout computes the module layout of plan. The slots of each task are
// read off its IR: every scalar it reads, every array it indexes or takes
// the length of, and the temporaries when it touches a local that lives
// across tasks.
func Layout(plan *lower.Plan) (*Module, error) { return LayoutWith(plan, Options{}) }

// LayoutWith is Layout with options.
func LayoutWith(plan *lower.Plan, opts Options) (*Module, error) {
	if plan == nil || plan.Kernel == nil {
		return nil, fmt.Errorf("kabi: nil plan")
	}
	k := plan.Kernel
	m := &Module{Name: Identifier(k.Name), NumParams: len(k.Params), NumTemps: len(plan.Temps), Bounds: opts.Bounds,
		AwaitsPredecessors: opts.AwaitsPredecessors}
	for _, t := range plan.Tasks {
		task := Task{
			Index:    t.Index,
			Entry:    fmt.Sprintf("%s_t%d", m.Name, t.Index),
			Kind:     t.Kind,
			Group:    t.Group,
			BlockDim: 1,
		}
		switch t.Kind {
		case lower.Serial:
		case lower.Parallel:
			if t.Loop == nil {
				return nil, ir.Errorf(t.Pos, k.Name, "parallel task %d has no loop", t.Index)
			}
			task.BlockDim = t.Loop.BlockDim
			if task.BlockDim == 0 {
				task.BlockDim = DefaultBlockDim
			}
			if task.BlockDim < 0 || task.BlockDim > MaxBlockDim {
				return nil, ir.Errorf(t.Loop.Pos, k.Name, "block size %d is outside 1..%d", task.BlockDim, MaxBlockDim)
			}
			task.HostTotal = HostTotal(t.Loop.Extents)
			task.TotalShapes = task.HostTotal != nil && readsShapes(t.Loop.Extents)
		case lower.Block:
			b := t.Blocks
			if b == nil {
				return nil, ir.Errorf(t.Pos, k.Name, "block task %d has no loop", t.Index)
			}
			if c, ok := b.Size.(*ir.Const); ok {
				task.BlockDim = int(c.Int())
				if task.BlockDim < 1 || task.BlockDim > MaxBlockDim {
					return nil, ir.Errorf(b.Pos, k.Name, "block size %d is outside 1..%d", task.BlockDim, MaxBlockDim)
				}
			} else {
				task.BlockDim = 0
				if task.BlockSize = HostTotal([]ir.Expr{b.Size}); task.BlockSize == nil {
					return nil, ir.Errorf(b.Pos, k.Name, "the block size must be computed from scalar parameters and constants")
				}
			}
			task.HostTotal = HostTotal([]ir.Expr{b.Count})
			task.TotalShapes = readsShapes([]ir.Expr{b.Count, b.Size})
			task.SharedBytes = b.SharedBytes()
		default:
			return nil, ir.Errorf(t.Pos, k.Name, "task %d has unknown kind %v", t.Index, t.Kind)
		}
		task.Slots = slotsOf(plan, t, opts)
		m.Tasks = append(m.Tasks, task)
	}
	return m, nil
}

// uses is what one task reads of the kernel's parameters.
type uses struct {
	scalars map[int]bool
	arrays  map[int]bool
	dims    map[[2]int]bool
	temps   bool
}

// slotsOf lays out the parameters task t uses, in parameter order (an
// array's address before its extents), the temporaries last.
func slotsOf(plan *lower.Plan, t *lower.Task, opts Options) []Slot {
	u := uses{scalars: map[int]bool{}, arrays: map[int]bool{}, dims: map[[2]int]bool{}}
	first := 1 // dimension 0 is needed only to check indices
	if opts.Bounds {
		first = 0
	}
	indexed := func(a *ir.Param) {
		if a == nil {
			return
		}
		u.arrays[a.Index] = true
		for d := first; d < a.Dims; d++ {
			u.dims[[2]int{a.Index, d}] = true
		}
		if opts.Bounds {
			u.temps = true // the violation record
		}
	}
	local := func(v *ir.Var) {
		if _, ok := plan.TempSlot[v]; ok {
			u.temps = true
		}
	}
	ir.Inspect(t.Stmts(), func(n ir.Node) bool {
		switch n := n.(type) {
		case *ir.ParamRef:
			if n.Param != nil {
				u.scalars[n.Param.Index] = true
			}
		case *ir.Len:
			if n.Array != nil && n.Dim >= 0 && n.Dim < n.Array.Dims {
				u.dims[[2]int{n.Array.Index, n.Dim}] = true
			}
		case *ir.VarRef:
			local(n.Var)
		case *ir.Decl:
			local(n.Var)
		case *ir.Assign:
			local(n.Var)
		default:
			if acc, ok := ir.AccessOf(n); ok {
				indexed(acc.Array)
			}
		}
		return true
	})
	var slots []Slot
	for _, p := range plan.Kernel.Params {
		if p == nil {
			continue
		}
		if !p.IsArray() {
			if u.scalars[p.Index] {
				slots = append(slots, Slot{Kind: ScalarSlot, Param: p.Index, Size: max(p.Elem.Size(), 4)})
			}
			continue
		}
		if u.arrays[p.Index] {
			slots = append(slots, Slot{Kind: ArraySlot, Param: p.Index, Size: 8})
		}
		for d := range p.Dims {
			if u.dims[[2]int{p.Index, d}] {
				slots = append(slots, Slot{Kind: DimSlot, Param: p.Index, Dim: d, Size: 8})
			}
		}
	}
	if u.temps {
		slots = append(slots, Slot{Kind: TempsSlot, Size: 8})
	}
	return slots
}

// Identifier turns a Go identifier into an ASCII one that PTX and C both
// accept: letters, digits and '_' stay, every other rune becomes _xHEX_.
func Identifier(name string) string {
	var sb strings.Builder
	for i, r := range name {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			fmt.Fprintf(&sb, "_x%x_", r)
		}
	}
	if sb.Len() == 0 {
		return "kernel"
	}
	return sb.String()
}

// readsShapes reports whether an extent takes an array's len.
func readsShapes(extents []ir.Expr) bool {
	found := false
	for _, e := range extents {
		ir.InspectExpr(e, func(n ir.Node) bool {
			if _, ok := n.(*ir.Len); ok {
				found = true
			}
			return !found
		})
	}
	return found
}
