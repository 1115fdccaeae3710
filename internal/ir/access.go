package ir

// AccessKind says what an array access does to its element.
type AccessKind uint8

// The kinds of array access.
const (
	AccessRead   AccessKind = iota + 1 // a Load
	AccessWrite                        // a Store
	AccessUpdate                       // an Atomic: a read and a write in one
)

func (k AccessKind) String() string {
	switch k {
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	case AccessUpdate:
		return "update"
	}
	return "access?"
}

// Access is one array access: a Load, a Store or an Atomic.
type Access struct {
	Node  Node // the *Load, *Store or *Atomic
	Array *Param
	Index []Expr
	Leaf  int // the leaf of a record element (Param.Rec); 0 for a scalar one
	Kind  AccessKind
}

// AccessOf reports whether n is an array access and, if so, returns it. It
// is the one definition of an access that the passes share: the layout's
// slots, the reductions' exclusions and the code generators' address
// schemes all read the accesses of a body through it or through Accesses.
func AccessOf(n Node) (Access, bool) {
	switch n := n.(type) {
	case *Load:
		return Access{Node: n, Array: n.Array, Index: n.Index, Leaf: n.Leaf, Kind: AccessRead}, true
	case *Store:
		return Access{Node: n, Array: n.Array, Index: n.Index, Leaf: n.Leaf, Kind: AccessWrite}, true
	case *Atomic:
		return Access{Node: n, Array: n.Array, Index: n.Index, Leaf: n.Leaf, Kind: AccessUpdate}, true
	}
	return Access{}, false
}

// Accesses calls f for every array access under stmts, in Inspect's order:
// a Store before the accesses in its index and value, an access before
// those in its own indices. When f returns false the access's operands
// are not visited.
func Accesses(stmts []Stmt, f func(Access) bool) {
	Inspect(stmts, func(n Node) bool {
		if acc, ok := AccessOf(n); ok {
			return f(acc)
		}
		return true
	})
}
