package kerneldocs

import (
	"fmt"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// The ERROR markers of refused blocks, in the style of the front end's
// testdata (internal/frontend/testdata/README.md), ERROR "text" only: a
// comment /* ERROR "text" */ right after the token an error is at, or
// // ERROR "text" at the end of the line for its last token. A dot is no
// token (gofmt writes qd. /* ERROR … */ LoopConfig), and several markers
// in a row want several errors at one token.

// marker is one expected error.
type marker struct {
	line, col int    // the page's position of the token before the marker
	text      string // what the message must contain
}

// markers returns the markers of b, at the page's positions.
func markers(b Block) ([]marker, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(Page, -1, len(b.Text))
	var s scanner.Scanner
	var bad error
	s.Init(file, []byte(b.Text), func(pos token.Position, msg string) {
		bad = fmt.Errorf("%s:%d:%d: %s", Page, b.Line+pos.Line-1, pos.Column, msg)
	}, scanner.ScanComments)
	var out []marker
	prev := token.NoPos
	for {
		pos, tok, lit := s.Scan()
		switch {
		case tok == token.EOF:
			return out, bad
		case tok == token.SEMICOLON && lit == "\n", tok == token.PERIOD:
			continue
		case tok == token.COMMENT:
			body := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(lit, "//"), "/*"), "*/"))
			rest, ok := strings.CutPrefix(body, "ERROR ")
			if !ok {
				break // a comment of the text, which an error may be about
			}
			text, err := strconv.Unquote(strings.TrimSpace(rest))
			at := fset.Position(pos)
			if err != nil || !prev.IsValid() {
				return nil, fmt.Errorf("%s:%d:%d: malformed marker %s: want ERROR \"text\" after a token", Page, b.Line+at.Line-1, at.Column, lit)
			}
			p := fset.Position(prev)
			out = append(out, marker{b.Line + p.Line - 1, p.Column, text})
			continue
		}
		prev = pos
	}
}

// matchMarkers matches errors with markers one to one and says what did
// not match.
func matchMarkers(want []marker, got []*ir.Error) []string {
	used := make([]bool, len(want))
	var problems []string
	for _, e := range got {
		found := false
		for i, m := range want {
			if !used[i] && e.Pos.File == Page && e.Pos.Line == m.line && e.Pos.Col == m.col && strings.Contains(e.Msg, m.text) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("unexpected error (no marker after the token at its position matches it): %v", e))
		}
	}
	for i, m := range want {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("%s:%d:%d: missing error: no error containing %q there", Page, m.line, m.col, m.text))
		}
	}
	return problems
}

// parseSnippet parses text as Go declarations, or else as statements.
func parseSnippet(text string) error {
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, Page, "package p\n"+text, 0); err == nil {
		return nil
	}
	_, err := parser.ParseFile(fset, Page, "package p\nfunc _() {\n"+text+"\n}\n", 0)
	return err
}
