package kerneldocs

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"path"
	"strings"
)

// Page is the checked page, relative to the module's root.
const Page = "docs/kernels.md"

// Kind says how a fenced block of the page is checked.
type Kind int

const (
	// Example is a ```go block that declares a //qd:kernel function: a
	// kernel file without its package clause, run natively and compiled.
	Example Kind = iota + 1
	// Refused is a ```go refused block: qd.Compile must refuse it with
	// exactly the errors its ERROR markers name.
	Refused
	// Snippet is any other ```go block (host code, fragments): it must
	// parse as Go declarations or statements.
	Snippet
)

func (k Kind) String() string {
	switch k {
	case Example:
		return "example"
	case Refused:
		return "refused"
	case Snippet:
		return "snippet"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Block is one fenced Go block of the page.
type Block struct {
	Kind Kind
	Line int    // the page's line of the block's first line of text
	Text string // the text between the fences, each line ending in \n
}

// Blocks returns the fenced Go blocks of a Markdown page, in order: those
// whose info string is "go" or "go refused". Other fences (text, shell
// output) are skipped; a Go block with another word after "go", or a fence
// left open, is an error, so that a misspelt marker cannot quietly leave
// an example unchecked.
func Blocks(md []byte) ([]Block, error) {
	var out []Block
	lines := strings.SplitAfter(string(md), "\n")
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(strings.TrimRight(lines[i], "\r\n"), "```")
		if !ok {
			continue
		}
		open := i + 1 // the fence's line, 1-based
		var text strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			text.WriteString(strings.TrimRight(lines[i], "\r\n") + "\n")
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s:%d: the fence is never closed", Page, open)
		}
		words := strings.Fields(info)
		if len(words) == 0 || words[0] != "go" {
			continue
		}
		b := Block{Line: open + 1, Text: text.String()}
		switch {
		case len(words) == 2 && words[1] == "refused":
			b.Kind = Refused
		case len(words) > 1:
			return nil, fmt.Errorf("%s:%d: unknown Go block %q: write ```go or ```go refused", Page, open, info)
		case hasMarker(b.Text):
			b.Kind = Example
		default:
			b.Kind = Snippet
		}
		out = append(out, b)
	}
	return out, nil
}

// hasMarker reports whether text has a //qd:kernel comment line. A line
// inside a string literal (host code that holds a kernel's source) is no
// marker: only comments are, as for the front end.
func hasMarker(text string) bool {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", "package kernels\n"+text, parser.ParseComments)
	if err != nil {
		// Not Go: the block's own check reports that; judge by its lines.
		for line := range strings.Lines(text) {
			if strings.TrimSpace(line) == "//qd:kernel" {
				return true
			}
		}
		return false
	}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if c.Text == "//qd:kernel" {
				return true
			}
		}
	}
	return false
}

// Source is the block as a kernel file for qd.Compile to compile under
// the name file: a package clause, then a //line directive, so that every
// position in an error is the page's line and column of the text shown.
// The directive names the file by its base name, since the scanner joins
// a relative name to the directory of the file it is in.
func (b Block) Source(file string) []byte {
	var s bytes.Buffer
	fmt.Fprintf(&s, "package kernels\n\n//line %s:%d:1\n%s", path.Base(file), b.Line, b.Text)
	return s.Bytes()
}

// Examples returns the sources of the page's examples, each as Source
// names it, for checks that compile every kernel qd's tests run
// (internal/codegencheck).
func Examples(md []byte) ([][]byte, error) {
	blocks, err := Blocks(md)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, b := range blocks {
		if b.Kind == Example {
			out = append(out, b.Source(Page))
		}
	}
	return out, nil
}
