package lower

import (
	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/native"
)

// TaskKind says how a task runs.
type TaskKind uint8

const (
	// Serial tasks run their statements once, on one thread.
	Serial TaskKind = iota + 1
	// Parallel tasks run the body of a ParallelFor once per point of its range.
	Parallel
	// Block tasks run the body of a Blocks loop once per block, on that
	// block's threads together.
	Block
)

func (k TaskKind) String() string {
	switch k {
	case Serial:
		return "serial"
	case Parallel:
		return "parallel"
	case Block:
		return "block"
	}
	return "task?"
}

// Task is one unit of launch: a parallel loop, a block loop or a run of
// serial statements.
type Task struct {
	Index int      // position in Plan.Tasks
	Kind  TaskKind //
	Group int      // stream-parallel group id, 0 when the kernel has no groups
	Loop  *ir.ParallelFor
	// Blocks is a Block task's loop.
	Blocks *ir.Blocks
	Body   []ir.Stmt // Serial tasks only
	Pos    ir.Pos    // position of the task's first statement
	// Reductions are the loop's atomics that code generators may combine
	// across iterations (Parallel tasks only; see Reduction).
	Reductions []*Reduction
}

// Plan is a lowered kernel.
type Plan struct {
	Kernel *ir.Kernel
	Tasks  []*Task
	// Temps are the locals that live across tasks, one per-launch slot each,
	// in slot order; TempSlot maps each to its slot.
	Temps    []*ir.Var
	TempSlot map[*ir.Var]int
	// Groups is the number of stream-parallel groups (0 if none). The tasks
	// of a group are consecutive in Tasks and groups appear in id order. An
	// empty group still takes an id (ids follow the source, as the user
	// counts them) but has no tasks, so some ids in 1..Groups may have none:
	// launchers acquire a stream per id that has tasks, not per id.
	Groups int
	// Hash is ir.HashKernel(Kernel), the compile cache key.
	Hash ir.Hash
	// Native, when set, is the kernel as `qd gen` generated it, compiled
	// into the program by the Go compiler (package native): the CPU backend
	// runs it in place of its closures. NativeFile is its source file's
	// name in the generated //line directives.
	Native     native.Func
	NativeFile string
}

// Stmts returns the statements a task runs: its Body, or its loop alone.
func (t *Task) Stmts() []ir.Stmt {
	switch t.Kind {
	case Parallel:
		return []ir.Stmt{t.Loop}
	case Block:
		return []ir.Stmt{t.Blocks}
	}
	return t.Body
}
