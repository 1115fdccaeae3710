package probe

import "time"

// PoolCycle, set by package qd, borrows and returns a pooled stream of
// program (a *qd.Program) n times and gives the mean time of one
// acquire+release.
var PoolCycle func(program any, n int) (time.Duration, error)
