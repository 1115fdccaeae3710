// Package probe lets package qd hand measurements of its internals to the
// benchmark suite (internal/benchsuite) without exporting them: qd sets the
// hooks in an init function. It imports nothing from qd, so both can import
// it.
package probe
