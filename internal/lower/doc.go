// Package lower turns a verified kernel into a Plan: the ordered list of tasks
// a backend launches.
//
// Every top-level ParallelFor becomes a parallel task and every run of
// consecutive top-level serial statements a serial task. Locals declared at
// the top level and used by more than one task live in per-launch temporaries
// (Plan.Temps) instead of a task's frame. Stream-parallel groups are numbered
// 1..Plan.Groups in source order and every task of a group carries its id;
// tasks outside groups have group 0.
//
// Lowering also enforces the placement rules that the IR's types cannot
// express: parallel loops only at the top level of a kernel or of a group;
// groups only at the top level, never nested, and either every top-level
// statement is a group or none is.
package lower
