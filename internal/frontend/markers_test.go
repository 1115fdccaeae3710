package frontend

import (
	"fmt"
	"go/scanner"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// ERROR markers: how a file of testdata/invalid says which errors Parse
// must report, in the form go/types uses for its own testdata (see
// TestErrors and testdata/README.md).

// A marker is one expected error: its position, and a pattern its message
// must match.
type marker struct {
	pos  token.Position // of the token the marker follows: where the error must be
	at   token.Position // of the marker itself, for messages
	text string         // the marker as written, for messages
	sub  string         // ERROR: the message contains sub
	rx   *regexp.Regexp // ERRORx: the message matches rx
}

func (m *marker) matches(msg string) bool {
	if m.rx != nil {
		return m.rx.MatchString(msg)
	}
	return strings.Contains(msg, m.sub)
}

// parseMarker reads one comment's text (lit, with its // or /* */). It
// returns ok false for a comment that is no marker, and an error for one
// that starts like a marker but is malformed: go/types ignores those, but
// here a mistyped marker would quietly drop an expectation.
func parseMarker(lit string) (m marker, ok bool, err error) {
	body := strings.TrimPrefix(lit, "//")
	if strings.HasPrefix(lit, "/*") {
		body = strings.TrimSuffix(strings.TrimPrefix(lit, "/*"), "*/")
	}
	kind, rest, _ := strings.Cut(strings.TrimSpace(body), " ")
	if kind != "ERROR" && kind != "ERRORx" {
		if strings.HasPrefix(kind, "ERROR") {
			return m, false, fmt.Errorf("marker %s: want ERROR or ERRORx followed by a quoted string", lit)
		}
		return m, false, nil
	}
	pattern, err := strconv.Unquote(strings.TrimSpace(rest))
	if err != nil {
		return m, false, fmt.Errorf("marker %s: the pattern must be a quoted Go string", lit)
	}
	m.text = strings.TrimSpace(body)
	if kind == "ERROR" {
		m.sub = pattern
		return m, true, nil
	}
	if m.rx, err = regexp.Compile(pattern); err != nil {
		return m, false, fmt.Errorf("marker %s: %v", lit, err)
	}
	return m, true, nil
}

// markers returns the ERROR markers of src, each at the position of the
// token or comment before it. Semicolons the scanner inserts at line ends
// are not tokens of the text, so a marker at the end of a line follows the
// line's last token, and one on a line of its own follows the previous
// line's last token or comment. Markers in a row share that position.
//
// A dot is not counted either, so a marker after the dot of a selector
// follows the name before it: gofmt prints "qd /* ERROR … */ .LoopConfig"
// as "qd. /* ERROR … */ LoopConfig", and no error is reported at a dot.
func markers(filename string, src []byte) ([]marker, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(filename, -1, len(src))
	var s scanner.Scanner
	var scanErrs scanner.ErrorList
	s.Init(file, src, func(pos token.Position, msg string) { scanErrs.Add(pos, msg) }, scanner.ScanComments)
	var list []marker
	prev := token.NoPos
	for {
		pos, tok, lit := s.Scan()
		switch tok {
		case token.EOF:
			return list, scanErrs.Err()
		case token.SEMICOLON:
			if lit == "\n" {
				continue
			}
		case token.PERIOD:
			continue
		case token.COMMENT:
			m, ok, err := parseMarker(lit)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", fset.Position(pos), err)
			}
			if !ok {
				break // a comment of the text, which an error may be about
			}
			if !prev.IsValid() {
				return nil, fmt.Errorf("%s: marker %s follows no token", fset.Position(pos), lit)
			}
			m.pos, m.at = fset.Position(prev), fset.Position(pos)
			list = append(list, m)
			continue
		}
		prev = pos
	}
}

// checkMarkers matches the errors Parse reported for filename against its
// markers, one to one, and returns what did not match: an error that no
// marker expects, or a marker that no error meets at its position.
func checkMarkers(filename string, want []marker, got ErrorList) []string {
	used := make([]bool, len(want))
	var problems []string
	for _, e := range got {
		msg := strings.TrimPrefix(e.Error(), e.Pos.String()+": ")
		found := false
		for i := range want {
			m := &want[i]
			if !used[i] && e.Pos.File == filename && e.Pos.Line == m.pos.Line && e.Pos.Col == m.pos.Column && m.matches(msg) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			problems = append(problems, fmt.Sprintf("%v\n\tunexpected error: no marker after the token at %s:%d:%d matches it",
				e, e.Pos.File, e.Pos.Line, e.Pos.Col))
		}
	}
	for i, m := range want {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("%s: missing error: %s wants an error at %d:%d (the token before it), and none matching was reported",
				m.at, m.text, m.pos.Line, m.pos.Column))
		}
	}
	return problems
}
