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
// Dims dimensions (1 to MaxDims) whose elements have type Elem, or, for an
// array of structs or fixed arrays, the layout Rec (Elem is then Invalid).
type Param struct {
	Name  string
	Elem  Type
	Rec   *Record // an array of records; nil for scalar elements
	Dims  int
	Index int // position in Kernel.Params
	Pos   Pos
	// Shared, for an array of a block's shared memory (qd.Shared), holds
	// its extents, fixed at compile time (Dims of them). Such an array is
	// declared by the Blocks loop that holds it, not in Kernel.Params, and
	// its Index is negative (-1 for the kernel's first, -2, ...) so that
	// passes keying arrays by Index tell the two kinds apart.
	Shared []int
	// GoType is the parameter's type as the kernel's Go source spells it
	// ("float32", "int", "[][]int64"), for messages and for matching
	// arguments to the declared type; empty for kernels built with the
	// Builder. It is not part of the kernel's structure (Hash ignores it).
	GoType string
}

// IsArray reports whether p is an array parameter.
func (p *Param) IsArray() bool { return p.Dims > 0 }

// MaxDims is the most dimensions an array parameter has.
const MaxDims = 4

// ElemSize is the size in bytes of one element of array p: its record's,
// or its scalar type's.
func (p *Param) ElemSize() int {
	if p.Rec != nil {
		return p.Rec.Size
	}
	return p.Elem.Size()
}

// LeafType is the type of leaf (an index into Rec.Leaves; 0 for a scalar
// element) of p's elements, Invalid when there is no such leaf.
func (p *Param) LeafType(leaf int) Type {
	if p.Rec == nil {
		if leaf == 0 {
			return p.Elem
		}
		return Invalid
	}
	if leaf < 0 || leaf >= len(p.Rec.Leaves) {
		return Invalid
	}
	return p.Rec.Leaves[leaf].Type
}

// LeafOffset is the byte offset of leaf within an element of p.
func (p *Param) LeafOffset(leaf int) int {
	if p.Rec == nil || leaf < 0 || leaf >= len(p.Rec.Leaves) {
		return 0
	}
	return p.Rec.Leaves[leaf].Offset
}

// Record is the layout of an array element that is a struct or a fixed
// array (Go's layout, which host memory and device memory share), flattened
// to its scalar leaves in Go's field and element order. Kernels read and
// write one leaf at a time; they never move a record as a whole.
type Record struct {
	Name   string // the Go type, for messages: "Particle", "qd.Vec2[float32]"
	Size   int    // bytes per element, padding included (unsafe.Sizeof)
	Align  int    // the element's alignment (unsafe.Alignof)
	Leaves []Leaf
}

// Leaf is one scalar of a record.
type Leaf struct {
	Path   string // its place in the Go value, for messages: ".X[0]"
	Type   Type
	Offset int // bytes from the element's start
}

// Var is a local variable. Vars are unique by pointer; the name is for
// printing and messages only. ID is unique within a kernel (the Builder and
// the front end number them from 1 in declaration order).
type Var struct {
	Name string
	Type Type
	ID   int
}
