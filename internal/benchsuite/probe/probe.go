package probe

import (
	"time"

	"github.com/quadrants-go/qd/internal/ir"
)

// BuildKernel, set by package qd, compiles a kernel written with the IR
// builder for program (a *qd.Program) and returns its *qd.Kernel: the
// suite's kernels are built as IR, which qd's API does not take.
var BuildKernel func(program any, kernel *ir.Kernel) (any, error)

// PoolCycle, set by package qd, borrows and returns a pooled stream of
// program (a *qd.Program) n times and gives the mean time of one
// acquire+release.
var PoolCycle func(program any, n int) (time.Duration, error)
