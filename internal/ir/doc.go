// Package ir is the typed intermediate representation of qd kernels.
//
// A Kernel has parameters (scalars, and arrays of 1 to 4 dimensions of
// scalars or of records) and a body of statements. At the top level of a
// body three things may appear: parallel loops (ParallelFor), serial
// statements, and stream-parallel groups (StreamParallel) whose bodies
// hold the same two kinds of statement. Inside a
// parallel loop, and inside serial statements, only ordinary statements
// appear: locals (Decl, Assign), array stores, if/else, serial loops with
// break and continue, and expression statements for atomics.
//
// Nodes are small structs; expressions implement Expr and statements Stmt,
// both sealed with unexported marker methods as go/ast does. Every local is a
// *Var, unique by pointer, so passes never resolve names.
//
// The package also holds the walkers (Inspect, and Accesses for the array
// accesses of a body, which every pass that looks at accesses shares), the
// verifier (Verify), the printer (Print) and the structural hash used as
// the compile cache key (Hash). Builder helps tests and tools write kernels
// by hand.
package ir
