// Package frontend turns kernel source, ordinary Go, into the typed IR.
//
// The pipeline of Parse:
//
//  1. go/parser parses the file, comments included: a function is a kernel
//     when a line "//qd:kernel" is part of the comment directly above it.
//  2. go/types type-checks the file. Its importer serves
//     github.com/quadrants-go/qd and math from Go source embedded in this
//     package (qdapi.go.txt, an exact copy of the root kernelapi.go, and
//     math.go.txt), so no Go toolchain or export data is needed at run time.
//     Any other import becomes an empty package: host code in the same file
//     may use it, and only errors inside kernels and the functions they call
//     are reported.
//  3. Each kernel is translated to an *ir.Kernel. Kernel API functions are
//     recognised by their resolved types.Object, never by name: a user's own
//     function called StreamParallel is an ordinary helper. Every other
//     function of the file a kernel calls is inlined: scalar arguments are
//     bound to fresh locals (or read directly when they are constants or
//     unassigned locals), array arguments alias the caller's array, and
//     results are locals the call expression reads. A return that does not
//     end the helper leaves a one-trip loop wrapped around the inlined body;
//     "if c { return a }; rest" is first rewritten to an if/else so that the
//     common early-return pattern needs no wrapper.
//  4. Structured control flow is kept structured: a switch becomes an if/else
//     chain (inside a one-trip ir.For when a break leaves it), continue in a
//     parallel loop leaves a one-trip ir.For around its body, and every
//     Break and Continue names its target loop explicitly.
//
// Calls inside expressions are evaluated before the expression that uses
// their results, in left-to-right order, as Go's compiler does; && and ||
// whose right operand needs statements become an if on a temporary, so the
// right operand still runs only when it must.
//
// Every unsupported construct is an *ir.Error at its position with a message
// that says what kernels support instead; Parse returns them as an ErrorList.
package frontend
