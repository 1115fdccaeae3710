// Package lower turns a verified kernel into a Plan: the ordered list of tasks
// a backend launches.
//
// Every top-level ParallelFor becomes a parallel task and every run of
// consecutive top-level serial statements a serial task; Task.Pos is the
// position of the task's first statement. Locals declared by a direct
// top-level Decl (of the kernel body or of a group body) and used by more
// than one task live in per-launch temporaries (Plan.Temps, in declaration
// order) instead of a task's frame; a parallel task may read them but not
// assign them. Locals that one task uses stay in that task, and so do the
// locals declared deeper (in a serial for loop's Init, in an if).
//
// Stream-parallel groups are numbered 1..Plan.Groups in source order and
// every task of a group carries its id; tasks outside groups have group 0.
// The tasks of a group are contiguous in Plan.Tasks and groups come in id
// order, so a launcher finds each group's run of tasks in one pass. An empty
// group takes an id but yields no task.
//
// Lowering creates no helper tasks today: every task is a top-level statement
// run of the source. A future helper task made for a loop (a reduction's
// finishing pass, a list generation, a clear) must take that loop's group id
// and sit in that group's run; Quadrants left such tasks in group 0, which
// split a group's run in two and ran the helper on the wrong stream.
//
// Lowering also enforces the placement rules that the IR's types cannot
// express: parallel loops only at the top level of a kernel or of a group;
// groups only at the top level, never nested, and either every top-level
// statement is a group or none is. Errors are *ir.Error values with the
// position of the offending statement and a message that says what to do.
//
// What a code generator may do with a task's loops (unroll them, move
// elements in wide runs, address them by affine bases, issue loads early)
// is decided by package lower/analysis, from the plan, for every
// generator alike.
package lower
