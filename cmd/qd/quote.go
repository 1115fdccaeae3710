package main

import (
	"go/scanner"
	"go/token"
	"strings"
	"unicode/utf8"

	"github.com/quadrants-go/qd/internal/ir"
	"github.com/quadrants-go/qd/internal/lower"
)

// source is the kernel file qd compile reads, for quoting statements in
// its description of tasks.
type source struct {
	file  string   // the name positions carry
	lines []string // its lines, without their newlines
}

// maxQuote bounds a quoted statement, in characters.
const maxQuote = 60

// quote returns the source from p to the end of its line, without a
// trailing comment and shortened to maxQuote characters, or "" where p is
// not in the file (a //line directive's file, an unknown position).
func (s source) quote(p ir.Pos) string {
	if !p.IsKnown() || p.File != s.file || p.Line > len(s.lines) {
		return ""
	}
	line := s.lines[p.Line-1]
	if p.Col > 1 && p.Col <= len(line)+1 {
		line = line[p.Col-1:]
	}
	line = strings.TrimSpace(stripComment(line))
	if utf8.RuneCountInString(line) > maxQuote {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:maxQuote-1])) + "…"
	}
	return line
}

// stripComment cuts line at its first comment, found by Go's scanner so
// that a // inside a string or rune literal is not one.
func stripComment(line string) string {
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(line))
	var sc scanner.Scanner
	sc.Init(f, []byte(line), func(token.Position, string) {}, scanner.ScanComments)
	for {
		pos, tok, _ := sc.Scan()
		switch tok {
		case token.EOF:
			return line
		case token.COMMENT:
			return line[:f.Offset(pos)]
		}
	}
}

// moreLines reports whether serial task t holds statements that start on
// other lines of the file than its first, so that the quote of its first
// line is not all it runs.
func (s source) moreLines(t *lower.Task) bool {
	for _, st := range t.Body {
		p := st.Position()
		if p.IsKnown() && p.File == s.file && p.Line != t.Pos.Line {
			return true
		}
	}
	return false
}
