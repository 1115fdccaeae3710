package frontend

import (
	"cmp"
	"slices"
	"strings"

	"github.com/quadrants-go/qd/internal/ir"
)

// maxErrors bounds the errors Parse reports: past a few, more only bury the
// first, which is usually the cause.
const maxErrors = 20

// ErrorList is the list of errors Parse found, sorted by position. Each is an
// *ir.Error, so errors.As finds the first.
type ErrorList []*ir.Error

func (l ErrorList) Error() string {
	var sb strings.Builder
	for i, e := range l {
		if i > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(e.Error())
	}
	return sb.String()
}

// Unwrap returns the errors of l for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// errList collects errors, dropping exact duplicates (an inlined helper
// called twice would otherwise report each of its problems twice).
type errList struct {
	list ErrorList
	seen map[string]bool
}

func (l *errList) add(e *ir.Error) {
	key := e.Error()
	if l.seen[key] {
		return
	}
	if l.seen == nil {
		l.seen = map[string]bool{}
	}
	l.seen[key] = true
	l.list = append(l.list, e)
}

// result returns the sorted, bounded list, or nil when there is none.
func (l *errList) result() error {
	if len(l.list) == 0 {
		return nil
	}
	out := slices.Clone(l.list)
	slices.SortStableFunc(out, func(a, b *ir.Error) int {
		if c := cmp.Compare(a.Pos.Line, b.Pos.Line); c != 0 {
			return c
		}
		return cmp.Compare(a.Pos.Col, b.Pos.Col)
	})
	if len(out) > maxErrors {
		out = out[:maxErrors]
	}
	return out
}
