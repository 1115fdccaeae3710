// Package probe lets package qd hand measurements of its internals to the
// benchmark suite (internal/benchsuite) without exporting them: qd sets the
// hooks in an init function. It imports nothing from qd, so both can import
// it.
package probe

import "time"

// PoolCycle, set by package qd, borrows and returns a pooled stream of
// program (a *qd.Program) n times and gives the mean time of one
// acquire+release.
var PoolCycle func(program any, n int) (time.Duration, error)
