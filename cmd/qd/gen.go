package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quadrants-go/qd/internal/nativegen"
)

const genUsage = `usage: qd gen [-check] [-name NAME] FILE.go...

Write, beside each kernel file FILE.go, FILE_qdgen.go: its kernels as
ordinary Go that the Go compiler builds into the program, with their
top-level parallel loops split over the CPU's cores. On the CPU backend,
qd.Compile runs these in place of its closure compiler whenever it is
given the very source they were generated from (its SHA-256 is in the
file); after an edit of FILE.go the closures run until qd gen runs again.
A kernel that cannot run natively is named in the file and here, with the
reason. Put '//go:generate qd gen kernels.go' beside the //go:embed of
the kernel file, and 'go generate' keeps it current.

-name is the file name the program gives qd.WithFilename (default: FILE's
base name), used in the generated code's line directives. With -check,
nothing is written: the exit status is 1 when a generated file is missing
or no longer matches its source.

flags:
`

// genCmd is the gen verb.
func genCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("gen", stderr)
	check := fs.Bool("check", false, "write nothing; exit 1 if a generated file is missing or stale")
	name := fs.String("name", "", "the kernel file's name in qd.WithFilename (default: its base name)")
	if code, ok := parseFlags(fs, args, genUsage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(fs, genUsage, stderr, "qd gen: want one or more Go source files")
	}
	if *name != "" && fs.NArg() > 1 {
		return usageError(fs, genUsage, stderr, "qd gen: -name names one file: give one FILE.go")
	}
	code := 0
	for _, file := range fs.Args() {
		src, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "qd gen: %v\n", err)
			code = 1
			continue
		}
		res, err := nativegen.Generate(cmp.Or(*name, filepath.Base(file)), src)
		if err != nil {
			fmt.Fprintf(stderr, "qd gen: %v\n", err)
			code = 1
			continue
		}
		out := genPath(file)
		if *check {
			old, err := os.ReadFile(out)
			switch {
			case err != nil:
				fmt.Fprintf(stderr, "qd gen -check: %s is missing: run qd gen %s\n", out, file)
				code = 1
			case !bytes.Equal(old, res.Source):
				fmt.Fprintf(stderr, "qd gen -check: %s is out of date with %s: run qd gen %s\n", out, file, file)
				code = 1
			}
			continue
		}
		if err := os.WriteFile(out, res.Source, 0o644); err != nil {
			fmt.Fprintf(stderr, "qd gen: %v\n", err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s: %d native kernels (%s)\n", out, len(res.Kernels), strings.Join(res.Kernels, ", "))
		for _, s := range res.Skipped {
			fmt.Fprintf(stdout, "  %s runs on the closure compiler: %s\n", s.Kernel, s.Why)
		}
	}
	return code
}

// genPath is the generated file of a kernel file: k.go → k_qdgen.go.
func genPath(file string) string {
	return strings.TrimSuffix(file, ".go") + "_qdgen.go"
}
