package ir

// Kernel is one kernel: a name, its parameters and its body.
//
// The top level of Body may hold ParallelFor loops, serial statements and
// StreamParallel groups; Verify states the exact rules.
type Kernel struct {
	Name   string
	Params []*Param
	Body   []Stmt
	Pos    Pos
}

// Param is a kernel parameter: a scalar (Dims == 0) or a row-major array of
// Dims dimensions (1 to 3) whose elements have type Elem.
type Param struct {
	Name  string
	Elem  Type
	Dims  int
	Index int // position in Kernel.Params
	Pos   Pos
	// GoType is the parameter's type as the kernel's Go source spells it
	// ("float32", "int", "[][]int64"), for messages and for matching
	// arguments to the declared type; empty for kernels built with the
	// Builder. It is not part of the kernel's structure (Hash ignores it).
	GoType string
}

// IsArray reports whether p is an array parameter.
func (p *Param) IsArray() bool { return p.Dims > 0 }

// Var is a local variable. Vars are unique by pointer; the name is for
// printing and messages only. ID is unique within a kernel (the Builder and
// the front end number them from 1 in declaration order).
type Var struct {
	Name string
	Type Type
	ID   int
}
