package ir

// Stmt is a statement. Every statement carries the source position it came
// from (the zero Pos when built by hand without one).
type Stmt interface {
	Position() Pos
	stmtNode()
}

// Decl declares Var and sets it to Init, or to the zero value when Init is
// nil. A Decl inside a loop body runs on every iteration.
type Decl struct {
	Pos  Pos
	Var  *Var
	Init Expr
}

// Assign sets a declared Var.
type Assign struct {
	Pos   Pos
	Var   *Var
	Value Expr
}

// Store writes Value to Array[Index...], or to leaf Leaf of that element
// when Array holds records.
type Store struct {
	Pos   Pos
	Array *Param
	Index []Expr
	Leaf  int
	Value Expr
}

// ExprStmt evaluates X for its effect (an Atomic whose old value is unused).
type ExprStmt struct {
	Pos Pos
	X   Expr
}

// If runs Then when Cond holds, else Else (which may be empty).
type If struct {
	Pos  Pos
	Cond Expr
	Then []Stmt
	Else []Stmt
}

// For is a serial loop: Init runs once; then while Cond holds (a nil Cond
// loops until a Break), Body runs, followed by Post. Continue skips to Post.
type For struct {
	Pos  Pos
	Init []Stmt
	Cond Expr
	Post []Stmt
	Body []Stmt
}

// Break leaves Loop, or the innermost enclosing For when Loop is nil.
type Break struct {
	Pos  Pos
	Loop *For
}

// Continue goes to the Post statements of Loop, or of the innermost enclosing
// For when Loop is nil.
type Continue struct {
	Pos  Pos
	Loop *For
}

// ParallelFor is a parallel loop over a 1- to 3-dimensional range: every
// point (Vars[0], ..., Vars[d-1]) of [0, Extents[0]) × ... runs Body, in any
// order and concurrently. Extents have integer types and are evaluated once,
// before any iteration; Vars take the type of their extent. BlockDim, when
// non-zero, is the number of threads per block a GPU backend uses.
//
// A ParallelFor appears only at the top level of a kernel or of a
// StreamParallel body.
type ParallelFor struct {
	Pos      Pos
	Vars     []*Var
	Extents  []Expr
	BlockDim int
	Body     []Stmt
}

// StreamParallel is a stream-parallel group: its statements run in order on
// one stream, and the groups of a kernel run concurrently, each on its own
// stream. Either every top-level statement of a kernel is a StreamParallel or
// none is; groups do not nest.
type StreamParallel struct {
	Pos  Pos
	Body []Stmt
}

func (s *Decl) Position() Pos           { return s.Pos }
func (s *Assign) Position() Pos         { return s.Pos }
func (s *Store) Position() Pos          { return s.Pos }
func (s *ExprStmt) Position() Pos       { return s.Pos }
func (s *If) Position() Pos             { return s.Pos }
func (s *For) Position() Pos            { return s.Pos }
func (s *Break) Position() Pos          { return s.Pos }
func (s *Continue) Position() Pos       { return s.Pos }
func (s *ParallelFor) Position() Pos    { return s.Pos }
func (s *StreamParallel) Position() Pos { return s.Pos }

func (*Decl) stmtNode()           {}
func (*Assign) stmtNode()         {}
func (*Store) stmtNode()          {}
func (*ExprStmt) stmtNode()       {}
func (*If) stmtNode()             {}
func (*For) stmtNode()            {}
func (*Break) stmtNode()          {}
func (*Continue) stmtNode()       {}
func (*ParallelFor) stmtNode()    {}
func (*StreamParallel) stmtNode() {}
