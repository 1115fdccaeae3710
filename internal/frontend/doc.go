// Package frontend turns kernel source, ordinary Go, into the typed IR.
//
// The pipeline of Parse (and ParseFile):
//
//  1. go/parser parses the file, comments included: a function is a kernel
//     when a line "//qd:kernel" is part of the comment directly above it.
//  2. go/types type-checks the file. Its importer serves
//     github.com/quadrants-go/qd and math from Go source embedded in this
//     package, so no Go toolchain or export data is needed at run time:
//     math as declarations (math.go.txt), qd as the kernel API
//     (qdapi.go.txt, an exact copy of the root kernelapi.go, its native
//     bodies replaced) and the value library with its bodies (vec.go.txt,
//     mat.go.txt, quat.go.txt, decomp.go.txt, rand.go.txt, exact copies of
//     the root files; library.go). Any other import becomes an empty
//     package: host code in the same file may use it, and only errors
//     inside kernels and the functions they call are reported.
//  3. Each kernel is translated to an *ir.Kernel. Kernel API functions are
//     recognised by their resolved types.Object, never by name: a user's own
//     function called StreamParallel is an ordinary helper. Every other
//     function or method of the file or of the library that a kernel calls
//     is inlined: value arguments are bound to fresh locals (or read
//     directly when they are constants or locals the callee cannot change),
//     array arguments alias the caller's array, and results are locals the
//     call expression reads, or the callee's own locals handed over by a
//     final return. A return that does not end the helper leaves a one-trip
//     loop wrapped around the inlined body; "if c { return a }; rest" is
//     first rewritten to an if/else so that the common early-return pattern
//     needs no wrapper.
//  4. A range loop at the top level of the kernel (or of a
//     qd.StreamParallel block) is a ParallelFor; anywhere else it is a
//     serial loop. Outside a parallel loop such a loop would run its whole
//     range on one thread, so it is refused unless a qd.Serial block, whose
//     statements are emitted in place, says that one thread is meant
//     (serial.go).
//  5. Structured control flow is kept structured: a switch becomes an if/else
//     chain (inside a one-trip ir.For when a break leaves it), continue in a
//     parallel loop leaves a one-trip ir.For around its body, and every
//     Break and Continue names its target loop explicitly.
//
// # Values
//
// The IR has scalars only; kernels have structs, fixed arrays and types
// defined over them (Vec3[T] is [3]T, a particle a struct of Vec3s). Every
// such value is scalarized (values.go): it is its leaves, one scalar per
// field or element, recursively, in Go's order, so that a field or an
// element is a contiguous run of leaves. A local is a run of ir.Vars
// named after the path to each leaf (p.V[0]); an expression is a val, its
// leaves as IR expressions. Reading a field or a constant element slices
// the run at compile time; a copy assigns each leaf. Nothing lives in
// memory, so a Mat3 stays in registers (codegencheck checks the PTX with
// ptxas -v).
//
// Assignments write places (places.go): a path from a local, or from what
// a pointer receiver points to, through fields and elements. A dynamic
// index makes the place one alternative per element, under the condition
// index == k: reads select among them, writes assign under an if, both
// bounded to maxDynamicLeaves leaves per access, and an index out of range
// reads the zero value and writes nothing (until the IR has an index
// check). Serial loops over constant counts that index local arrays with
// their variable are unrolled (unroll.go), which makes those indices
// constants; constants the translation creates fold as the operation would
// compute them (fold.go).
//
// An array parameter of structs or fixed arrays ([]Particle) is memory,
// not a value (records.go): its ir.Record has the element type's leaves in
// the same order, at Go's offsets (go/types' gc sizes, which reflect gives
// the host too), so ps[i].V is the Loads of a run of leaves, ps[i] = q
// their Stores, and &grid[i][j].M an Atomic on one leaf. A dynamic index
// into an array inside an element gives alternatives, as for a local.
//
// Methods (methods.go) are inlined like helpers with the receiver as the
// first parameter: a value receiver is a copy, a pointer receiver works on
// the caller's leaves (an operand at a dynamic index, or an element of an
// array parameter, through a temporary copied back after the call).
//
// Generic functions, methods of generic types and generic kernels are
// translated per instantiation (generics.go): each frame has an
// environment from type parameters to types, built from
// types.Info.Instances at calls, from the receiver's type arguments at
// method calls, and from Generic.Instantiate's arguments for a generic
// kernel, and every type the translation asks about goes through it.
// ParseFile returns generic kernels as Generic templates (generic.go);
// Parse refuses them until the root package launches them.
//
// Calls inside expressions are evaluated before the expression that uses
// their results, in left-to-right order, as Go's compiler does; && and ||
// whose right operand needs statements become an if on a temporary, so the
// right operand still runs only when it must.
//
// Every unsupported construct is an *ir.Error at its position with a message
// that says what kernels support instead; Parse returns them as an
// ErrorList. An error inside the library is reported at the call in the
// kernel's file that led there, naming the library function.
package frontend
