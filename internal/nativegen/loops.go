package nativegen

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"
)

// The top-level statements of a kernel (and of its qd.StreamParallel
// blocks) as the generated code runs them:
//
//	for i := range n                    native.For over [0, n), i of n's type
//	for i, v := range x  (x a slice)    native.For over [0, len(x))
//	for i, j := range qd.NDRange(n, m)  native.For2 over the n·m points, row by row
//	for p := range qd.NDRange3(n, m, k) native.For3, p a qd.Index3
//	for b := range qd.Blocks(n, size)   native.Blocks, b = qd.BlockAt(i, size)
//	qd.StreamParallel(func() {...})     the block's statements, in order
//	anything else                       the kernel's text (serial)
//
// Each loop variable is declared afresh per iteration from the chunk's
// counters, as a range loop's is, and its body is the kernel's text.

// stmts writes the statements of a kernel's top level.
func (g *gen) stmts(b *strings.Builder, list []ast.Stmt, top bool) string {
	for _, st := range list {
		switch st := st.(type) {
		case *ast.RangeStmt:
			if why := g.rangeLoop(b, st); why != "" {
				return why
			}
			continue
		case *ast.ExprStmt:
			if lit := g.streamParallel(st); lit != nil {
				g.used[g.qd] = true
				fmt.Fprintf(b, "\t%s.StreamParallel(func() {\n", g.qd)
				if why := g.stmts(b, lit.Body.List, true); why != "" {
					return why
				}
				b.WriteString("\t})\n")
				continue
			}
		}
		b.WriteString("\t" + g.text(st.Pos(), st.End()) + "\n")
	}
	return ""
}

// streamParallel is the function literal of a qd.StreamParallel call
// statement, or nil.
func (g *gen) streamParallel(st *ast.ExprStmt) *ast.FuncLit {
	call, ok := st.X.(*ast.CallExpr)
	if !ok || g.qdFunc(call.Fun) != "StreamParallel" || len(call.Args) != 1 {
		return nil
	}
	lit, _ := call.Args[0].(*ast.FuncLit)
	return lit
}

// qdFunc is the name of the package qd function e denotes, or "".
func (g *gen) qdFunc(e ast.Expr) string {
	if ix, ok := e.(*ast.IndexExpr); ok { // an explicit instance
		e = ix.X
	}
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	fn, ok := g.syn.Info.Uses[s.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Pkg().Path() != qdPath {
		return ""
	}
	return fn.Name()
}

// vars are the names a range statement declares: key and value, "" when
// absent or blank.
func vars(st *ast.RangeStmt) (string, string) {
	name := func(e ast.Expr) string {
		if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
			return id.Name
		}
		return ""
	}
	return name(st.Key), name(st.Value)
}

// declare declares the non-empty names as the values, and uses them.
func declare(b *strings.Builder, indent string, names, values []string) {
	var ns, vs []string
	for i, n := range names {
		if n != "" {
			ns, vs = append(ns, n), append(vs, values[i])
		}
	}
	if len(ns) == 0 {
		return
	}
	blanks := strings.TrimSuffix(strings.Repeat("_, ", len(ns)), ", ")
	fmt.Fprintf(b, "%s%s := %s\n%s%s = %s\n", indent, strings.Join(ns, ", "), strings.Join(vs, ", "), indent, blanks, strings.Join(ns, ", "))
}

// rangeLoop writes a top-level range loop.
func (g *gen) rangeLoop(b *strings.Builder, st *ast.RangeStmt) string {
	if st.Tok == 0 && (st.Key != nil || st.Value != nil) || st.Tok.String() == "=" {
		return "a top-level range loop that assigns existing variables"
	}
	key, val := vars(st)
	red := g.reductions(st)
	body := g.text(st.Body.Lbrace+1, st.Body.Rbrace, red.edits...)
	L := prefix + "L"
	if call, ok := st.X.(*ast.CallExpr); ok {
		switch g.qdFunc(call.Fun) {
		case "NDRange":
			b.WriteString("\t{\n")
			fmt.Fprintf(b, "\t\tqdgN, qdgM := %s, %s\n", g.arg(call.Args[0]), g.arg(call.Args[1]))
			b.WriteString(red.beforeLoop("qdgN * qdgM"))
			fmt.Fprintf(b, "\t\tnative.For2(%s, qdgN, qdgM, func(qdgLo, qdgHi int) {\n", L)
			b.WriteString(red.pro)
			b.WriteString("\t\t\tqdgI, qdgJ := qdgLo/qdgM, qdgLo%qdgM\n\t\t\tfor qdgLo < qdgHi {\n")
			b.WriteString("\t\t\t\tqdgEnd := min(qdgM, qdgJ+qdgHi-qdgLo)\n\t\t\t\tqdgLo += qdgEnd - qdgJ\n")
			b.WriteString("\t\t\t\tfor ; qdgJ < qdgEnd; qdgJ++ {\n")
			declare(b, "\t\t\t\t\t", []string{key, val}, []string{"qdgI", "qdgJ"})
			fmt.Fprintf(b, "\t\t\t\t\t%s\n\t\t\t\t}\n\t\t\t\tqdgI, qdgJ = qdgI+1, 0\n\t\t\t}\n%s\t\t})\n%s\t}\n", body, red.epi, red.after)
			return ""
		case "NDRange3":
			b.WriteString("\t{\n")
			fmt.Fprintf(b, "\t\tqdgN, qdgM, qdgK := %s, %s, %s\n", g.arg(call.Args[0]), g.arg(call.Args[1]), g.arg(call.Args[2]))
			b.WriteString(red.beforeLoop("qdgN * qdgM * qdgK"))
			fmt.Fprintf(b, "\t\tnative.For3(%s, qdgN, qdgM, qdgK, func(qdgLo, qdgHi int) {\n", L)
			b.WriteString(red.pro)
			b.WriteString("\t\t\tqdgA, qdgB, qdgC := qdgLo/(qdgM*qdgK), qdgLo/qdgK%qdgM, qdgLo%qdgK\n\t\t\tfor qdgLo < qdgHi {\n")
			b.WriteString("\t\t\t\tqdgEnd := min(qdgK, qdgC+qdgHi-qdgLo)\n\t\t\t\tqdgLo += qdgEnd - qdgC\n")
			b.WriteString("\t\t\t\tfor ; qdgC < qdgEnd; qdgC++ {\n")
			if key != "" {
				g.used[g.qd] = true
			}
			declare(b, "\t\t\t\t\t", []string{key}, []string{g.qd + ".Index3{I: qdgA, J: qdgB, K: qdgC}"})
			fmt.Fprintf(b, "\t\t\t\t\t%s\n\t\t\t\t}\n\t\t\t\tqdgB, qdgC = qdgB+1, 0\n\t\t\t\tif qdgB == qdgM {\n\t\t\t\t\tqdgA, qdgB = qdgA+1, 0\n\t\t\t\t}\n\t\t\t}\n%s\t\t})\n%s\t}\n", body, red.epi, red.after)
			return ""
		case "Blocks":
			if key != "" {
				g.used[g.qd] = true
			}
			b.WriteString("\t{\n")
			fmt.Fprintf(b, "\t\tqdgN, qdgS := %s, %s\n", g.arg(call.Args[0]), g.arg(call.Args[1]))
			b.WriteString(red.beforeLoop("qdgN * qdgS"))
			fmt.Fprintf(b, "\t\tnative.Blocks(%s, qdgN, qdgS, func(qdgLo, qdgHi int) {\n%s\t\t\tfor qdgI := qdgLo; qdgI < qdgHi; qdgI++ {\n", L, red.pro)
			declare(b, "\t\t\t\t", []string{key}, []string{g.qd + ".BlockAt(qdgI, qdgS)"})
			fmt.Fprintf(b, "\t\t\t\t%s\n\t\t\t}\n%s\t\t})\n%s\t}\n", body, red.epi, red.after)
			return ""
		}
	}
	t := g.syn.Info.TypeOf(st.X)
	if t == nil {
		return "a top-level range loop whose range has no type"
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if u.Info()&types.IsInteger == 0 {
			return "a top-level range over a " + u.String()
		}
		tname := "int"
		if u.Info()&types.IsUntyped == 0 {
			tname = types.TypeString(t, g.qualifier)
		}
		b.WriteString("\t{\n")
		fmt.Fprintf(b, "\t\tqdgN := %s(%s)\n", tname, g.arg(st.X))
		b.WriteString(red.beforeLoop("int(qdgN)"))
		fmt.Fprintf(b, "\t\tnative.For(%s, qdgN, func(qdgLo, qdgHi %s) {\n%s%s\t\t\tfor qdgI := qdgLo; qdgI < qdgHi; qdgI++ {\n", L, tname, red.pro, within(g.lenOf(st.X)))
		declare(b, "\t\t\t\t", []string{key}, []string{"qdgI"})
		fmt.Fprintf(b, "\t\t\t\t%s\n\t\t\t}\n%s\t\t})\n%s\t}\n", body, red.epi, red.after)
		return ""
	case *types.Slice:
		b.WriteString("\t{\n")
		fmt.Fprintf(b, "\t\tqdgX := %s\n", g.arg(st.X))
		b.WriteString(red.beforeLoop("len(qdgX)"))
		fmt.Fprintf(b, "\t\tnative.For(%s, len(qdgX), func(qdgLo, qdgHi int) {\n%s%s\t\t\tfor qdgI := qdgLo; qdgI < qdgHi; qdgI++ {\n", L, red.pro, within("qdgX", g.sliceVar(st.X)))
		declare(b, "\t\t\t\t", []string{key, val}, []string{"qdgI", "qdgX[qdgI]"})
		fmt.Fprintf(b, "\t\t\t\t%s\n\t\t\t}\n%s\t\t})\n%s\t}\n", body, red.epi, red.after)
		return ""
	case *types.Array, *types.Pointer:
		b.WriteString("\t" + g.text(st.Pos(), st.End()) + "\n") // a serial loop over a local array
		return ""
	}
	return "a top-level range over a " + types.TypeString(t, g.qualifier)
}

// lenOf is the name of s when e is len(s) of a slice variable s, else "".
func (g *gen) lenOf(e ast.Expr) string {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return ""
	}
	if fn, ok := call.Fun.(*ast.Ident); !ok || fn.Name != "len" {
		return ""
	}
	return g.sliceVar(call.Args[0])
}

// sliceVar is the name of e when e is a variable of slice type, else "".
func (g *gen) sliceVar(e ast.Expr) string {
	s, ok := e.(*ast.Ident)
	if !ok {
		return ""
	}
	if _, ok := g.syn.Info.TypeOf(s).Underlying().(*types.Slice); !ok {
		return ""
	}
	return s.Name
}

// within is a chunk's statement that its range [qdgLo, qdgHi) lies in
// the named slices (the ones whose length is the loop's count; "" ones
// aside). It never fires; it tells the Go compiler so, which then drops
// the index checks of s[i] in the body: without it, a body that reads two
// slices ran 20% slower than the plain loop.
func within(slices ...string) string {
	var conds []string
	for _, s := range slices {
		if s != "" {
			conds = append(conds, "qdgHi > len("+s+")")
		}
	}
	if len(conds) == 0 {
		return ""
	}
	return "\t\t\tif qdgLo < 0 || " + strings.Join(conds, " || ") + " {\n\t\t\t\tpanic(\"qd gen: a chunk outside its loop\")\n\t\t\t}\n"
}

// arg is an expression's text under its line directive.
func (g *gen) arg(e ast.Expr) string {
	g.exprText(e)
	return g.text(e.Pos(), e.End())
}
