package ir

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

var binOpNames = [...]string{Add: "+", Sub: "-", Mul: "*", Div: "/", Rem: "%", And: "&", Or: "|", Xor: "^",
	AndNot: "&^", Shl: "<<", Shr: ">>", Eq: "==", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">=",
	LAnd: "&&", LOr: "||", Min: "min", Max: "max"}

// String returns op's Go spelling ("+", "&&", ...; "min" and "max" for the
// builtins).
func (op BinOp) String() string {
	if op > 0 && int(op) < len(binOpNames) {
		return binOpNames[op]
	}
	return "BinOp(" + strconv.Itoa(int(op)) + ")"
}

// String returns op's Go spelling: "-", "!" or "^".
func (op UnOp) String() string {
	switch op {
	case Neg:
		return "-"
	case Not:
		return "!"
	case BitNot:
		return "^"
	}
	return "UnOp(" + strconv.Itoa(int(op)) + ")"
}

// precedence is Go's binary operator precedence (5 binds tightest); Min and
// Max print as calls and need none.
func (op BinOp) precedence() int {
	switch op {
	case Mul, Div, Rem, Shl, Shr, And, AndNot:
		return 5
	case Add, Sub, Or, Xor:
		return 4
	case Eq, Ne, Lt, Le, Gt, Ge:
		return 3
	case LAnd:
		return 2
	case LOr:
		return 1
	}
	return 6
}

// Print returns k in a readable, Go-like form, for debugging, golden tests
// and messages:
//
//	kernel saxpy(a f32, x [1]f32, y [1]f32) {
//	  parallel for i := range len(x, 0) {
//	    y[i] = a*x[i] + y[i]
//	  }
//	}
//
// Arrays print as [dims]elem, declarations as var x T = init, parallel loops
// as parallel for with ndrange(...) for several dimensions and (block_dim=n)
// when set, stream-parallel groups as group { ... }, atomics as
// atomic_op(&a[i], v) and conversions as T(x). A local prints as its name, or
// as name#ID when another local of the kernel has the same name. For loops
// that a Break or Continue names explicitly get labels L1, L2, ... Print
// never panics; nil nodes print as <nil>.
func Print(k *Kernel) string {
	var b strings.Builder
	Fprint(&b, k)
	return b.String()
}

// Fprint writes Print(k) to w and returns the first write error.
func Fprint(w io.Writer, k *Kernel) error {
	p := &printer{vars: map[*Var]string{}, labels: map[*For]string{}}
	p.kernel(k)
	_, err := io.WriteString(w, p.b.String())
	return err
}

type printer struct {
	b      strings.Builder
	indent int
	vars   map[*Var]string
	labels map[*For]string
}

func (p *printer) kernel(k *Kernel) {
	if k == nil {
		p.b.WriteString("<nil kernel>\n")
		return
	}
	p.names(k)
	fmt.Fprintf(&p.b, "kernel %s(", k.Name)
	for i, prm := range k.Params {
		if i > 0 {
			p.b.WriteString(", ")
		}
		if prm == nil {
			p.b.WriteString("<nil>")
			continue
		}
		p.b.WriteString(prm.Name + " ")
		if prm.Dims > 0 {
			fmt.Fprintf(&p.b, "[%d]", prm.Dims)
		}
		if r := prm.Rec; r != nil {
			fmt.Fprintf(&p.b, "record %s{", r.Name)
			for i, l := range r.Leaves {
				if i > 0 {
					p.b.WriteString(" ")
				}
				fmt.Fprintf(&p.b, "%s %s @%d", l.Path, l.Type, l.Offset)
			}
			fmt.Fprintf(&p.b, "; %d bytes}", r.Size)
		} else {
			p.b.WriteString(prm.Elem.String())
		}
	}
	p.b.WriteString(") ")
	p.block(k.Body)
	p.b.WriteString("\n")
}

// names chooses how each local prints (name, or name#ID when the name is
// shared) and labels the For loops that are explicit branch targets.
func (p *printer) names(k *Kernel) {
	byName := map[string]map[*Var]bool{}
	Inspect(k.Body, func(n Node) bool {
		switch n := n.(type) {
		case *Break:
			p.label(n.Loop)
		case *Continue:
			p.label(n.Loop)
		}
		return true
	})
	VarsUsed(k.Body, func(v *Var, _ bool) {
		if v == nil {
			return
		}
		if byName[v.Name] == nil {
			byName[v.Name] = map[*Var]bool{}
		}
		byName[v.Name][v] = true
	})
	for name, set := range byName {
		for v := range set {
			switch {
			case name == "":
				p.vars[v] = "v#" + strconv.Itoa(v.ID)
			case len(set) > 1:
				p.vars[v] = name + "#" + strconv.Itoa(v.ID)
			default:
				p.vars[v] = name
			}
		}
	}
}

func (p *printer) label(f *For) {
	if f != nil && p.labels[f] == "" {
		p.labels[f] = "L" + strconv.Itoa(len(p.labels)+1)
	}
}

func (p *printer) v(v *Var) string {
	if v == nil {
		return "<nil>"
	}
	return p.vars[v]
}

func (p *printer) line(format string, args ...any) {
	p.b.WriteString(strings.Repeat("  ", p.indent))
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteString("\n")
}

// block writes "{", the statements one level deeper, and the closing "}"
// (without a newline, so that "} else {" can follow).
func (p *printer) block(list []Stmt) {
	p.b.WriteString("{\n")
	p.indent++
	for _, s := range list {
		p.stmt(s)
	}
	p.indent--
	p.b.WriteString(strings.Repeat("  ", p.indent) + "}")
}

// elemText is a shared array's element type as the header prints it.
func elemText(a *Param) string {
	if r := a.Rec; r != nil {
		return "record " + r.Name
	}
	return a.Elem.String()
}

func (p *printer) open(format string, args ...any) {
	p.b.WriteString(strings.Repeat("  ", p.indent))
	fmt.Fprintf(&p.b, format, args...)
}

func (p *printer) stmt(s Stmt) {
	switch s := s.(type) {
	case *If:
		p.open("if %s ", p.expr(s.Cond))
		p.block(s.Then)
		// An else that holds only an if prints as "else if", on this
		// level: nested, the chain a switch becomes indented each case
		// once more, and 10,000 cases printed 400 MB.
		for len(s.Else) == 1 {
			next, ok := s.Else[0].(*If)
			if !ok || next == nil {
				break
			}
			s = next
			fmt.Fprintf(&p.b, " else if %s ", p.expr(s.Cond))
			p.block(s.Then)
		}
		if len(s.Else) > 0 {
			p.b.WriteString(" else ")
			p.block(s.Else)
		}
		p.b.WriteString("\n")
	case *For:
		if l := p.labels[s]; l != "" {
			p.line("%s:", l)
		}
		switch {
		case len(s.Init) == 0 && len(s.Post) == 0 && s.Cond == nil:
			p.open("for ")
		case len(s.Init) == 0 && len(s.Post) == 0:
			p.open("for %s ", p.expr(s.Cond))
		default:
			cond := ""
			if s.Cond != nil {
				cond = p.expr(s.Cond)
			}
			p.open("for %s; %s; %s ", p.simple(s.Init), cond, p.simple(s.Post))
		}
		p.block(s.Body)
		p.b.WriteString("\n")
	case *ParallelFor:
		cfg := ""
		if s.BlockDim != 0 {
			cfg = fmt.Sprintf("(block_dim=%d)", s.BlockDim)
		}
		vars := make([]string, len(s.Vars))
		for i, v := range s.Vars {
			vars[i] = p.v(v)
		}
		rng := p.exprList(s.Extents)
		if len(s.Extents) != 1 {
			rng = "ndrange(" + rng + ")"
		}
		p.open("parallel%s for %s := range %s ", cfg, strings.Join(vars, ", "), rng)
		p.block(s.Body)
		p.b.WriteString("\n")
	case *StreamParallel:
		p.open("group ")
		p.block(s.Body)
		p.b.WriteString("\n")
	case *Blocks:
		p.open("blocks for %s := range %s, size %s ", p.v(s.Var), p.expr(s.Count), p.expr(s.Size))
		p.b.WriteString("{\n")
		p.indent++
		for _, a := range s.Shared {
			if a == nil {
				p.line("shared <nil>")
				continue
			}
			shape := ""
			for _, n := range a.Shared {
				shape += fmt.Sprintf("[%d]", n)
			}
			p.line("shared %s %s%s", a.Name, shape, elemText(a))
		}
		if len(s.PerThread) > 0 {
			names := make([]string, len(s.PerThread))
			for i, v := range s.PerThread {
				names[i] = p.v(v)
			}
			p.line("per-thread %s", strings.Join(names, ", "))
		}
		for _, st := range s.Body {
			p.stmt(st)
		}
		p.indent--
		p.b.WriteString(strings.Repeat("  ", p.indent) + "}\n")
	case *Threads:
		p.open("threads for %s ", p.v(s.Var))
		p.block(s.Body)
		p.b.WriteString("\n")
	case *BlockReduce:
		op := map[BinOp]string{Add: "sum", Min: "min", Max: "max"}[s.Op]
		p.line("%s = block_%s(%s)", p.v(s.Result), op, p.v(s.X))
	case *BlockScan:
		kind := "exclusive"
		if s.Inclusive {
			kind = "inclusive"
		}
		p.line("%s = block_%s_sum(%s)", p.v(s.Result), kind, p.v(s.X))
	default:
		p.line("%s", p.simple([]Stmt{s}))
	}
}

// simple prints statements that fit on one line, joined by ", " (a For's
// Init and Post).
func (p *printer) simple(list []Stmt) string {
	parts := make([]string, len(list))
	for i, s := range list {
		switch s := s.(type) {
		case nil:
			parts[i] = "<nil>"
		case *Decl:
			t := "<nil>"
			if s.Var != nil {
				t = s.Var.Type.String()
			}
			parts[i] = "var " + p.v(s.Var) + " " + t
			if s.Init != nil {
				parts[i] += " = " + p.expr(s.Init)
			}
		case *Assign:
			parts[i] = p.v(s.Var) + " = " + p.expr(s.Value)
		case *Store:
			parts[i] = p.access(s.Array, s.Index, s.Leaf) + " = " + p.expr(s.Value)
		case *ExprStmt:
			parts[i] = p.expr(s.X)
		case *Break:
			parts[i] = "break" + p.target(s.Loop)
		case *Continue:
			parts[i] = "continue" + p.target(s.Loop)
		default:
			parts[i] = fmt.Sprintf("<%T>", s)
		}
	}
	return strings.Join(parts, ", ")
}

func (p *printer) target(f *For) string {
	if f == nil {
		return ""
	}
	return " " + p.labels[f]
}

func (p *printer) access(a *Param, index []Expr, leaf int) string {
	var b strings.Builder
	if a == nil {
		b.WriteString("<nil>")
	} else {
		b.WriteString(a.Name)
	}
	for _, x := range index {
		b.WriteString("[" + p.expr(x) + "]")
	}
	if a != nil && a.Rec != nil && leaf >= 0 && leaf < len(a.Rec.Leaves) {
		b.WriteString(a.Rec.Leaves[leaf].Path)
	}
	return b.String()
}

func (p *printer) exprList(list []Expr) string {
	parts := make([]string, len(list))
	for i, x := range list {
		parts[i] = p.expr(x)
	}
	return strings.Join(parts, ", ")
}

func (p *printer) expr(e Expr) string { return p.exprPrec(e, 0, 0) }

// exprPrec prints e, parenthesised when it is a binary expression binding
// less tightly than prec; parent is the precedence of the enclosing binary
// operator (0 for none). Like gofmt, it drops the spaces around a
// multiplicative operator under a looser one, so a*x[i] + y[i] reads as Go.
func (p *printer) exprPrec(e Expr, prec, parent int) string {
	switch e := e.(type) {
	case nil:
		return "<nil>"
	case *Const:
		return constString(e)
	case *ParamRef:
		if e.Param == nil {
			return "<nil>"
		}
		return e.Param.Name
	case *VarRef:
		return p.v(e.Var)
	case *Len:
		return fmt.Sprintf("len(%s, %d)", p.access(e.Array, nil, -1), e.Dim)
	case *Unary:
		x := p.exprPrec(e.X, 6, 6)
		if strings.HasPrefix(x, "-") || strings.HasPrefix(x, "+") {
			x = "(" + x + ")" // -(-3), not --3
		}
		return e.Op.String() + x
	case *Binary:
		if e.Op == Min || e.Op == Max {
			return fmt.Sprintf("%s(%s, %s)", e.Op, p.expr(e.X), p.expr(e.Y))
		}
		q := e.Op.precedence()
		sep := " "
		if q == 5 && parent > 0 && parent < 5 {
			sep = ""
		}
		s := p.exprPrec(e.X, q, q) + sep + e.Op.String() + sep + p.exprPrec(e.Y, q+1, q)
		if q < prec {
			return "(" + s + ")"
		}
		return s
	case *Convert:
		return e.To.String() + "(" + p.expr(e.X) + ")"
	case *Select:
		return "select(" + p.exprList([]Expr{e.Cond, e.X, e.Y}) + ")"
	case *Call:
		return e.Fn.String() + "(" + p.exprList(e.Args) + ")"
	case *Load:
		return p.access(e.Array, e.Index, e.Leaf)
	case *Bitcast:
		return "bits_" + e.To.String() + "(" + p.expr(e.X) + ")"
	case *Atomic:
		args := "&" + p.access(e.Array, e.Index, e.Leaf)
		if e.Compare != nil {
			args += ", " + p.expr(e.Compare)
		}
		return "atomic_" + e.Op.String() + "(" + args + ", " + p.expr(e.Value) + ")"
	}
	return fmt.Sprintf("<%T>", e)
}

// constString prints c so that its value is exact: integers in decimal,
// floats with the fewest digits that round-trip (with ".0" when they would
// read as integers), and nan, +inf, -inf.
func constString(c *Const) string {
	switch c.T {
	case Bool:
		return strconv.FormatBool(c.Bits != 0)
	case I32, I64:
		return strconv.FormatInt(int64(c.Bits), 10)
	case U32, U64:
		return strconv.FormatUint(c.Bits, 10)
	case F32, F64:
		f, size := c.Float(), 64
		if c.T == F32 {
			size = 32
		}
		switch {
		case math.IsNaN(f):
			return "nan"
		case math.IsInf(f, 1):
			return "+inf"
		case math.IsInf(f, -1):
			return "-inf"
		}
		s := strconv.FormatFloat(f, 'g', -1, size)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return s
	}
	return fmt.Sprintf("%s(%#x)", c.T, c.Bits)
}
