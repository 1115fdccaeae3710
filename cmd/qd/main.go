package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `qd: GPU compute for Go

usage:
  qd devices [-json] list backends and devices, and why a backend is unavailable
  qd demo [flags]    show four ways streams pay off, each checked against plain Go
  qd trace FILE      render a recorded trace (Chrome JSON) as an SVG timeline
  qd bench [-json]   run the performance suite: each figure, its reference and bar
  qd compile FILE.go write the PTX (or IR) qd generates for each kernel of a file
  qd gen FILE.go     write FILE_qdgen.go: the kernels as Go for the CPU backend to run natively
  qd run -n N prog   start N processes of prog as a process group (qd.NewComm)
  qd help            this text

Run 'qd demo -h' for the demo's flags.
`

// run is main without the process: it returns the exit code (2 for usage
// errors), so tests can drive every verb.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "devices":
		return devicesCmd(args[1:], stdout, stderr)
	case "demo":
		return demo(args[1:], stdout, stderr)
	case "bench":
		return benchCmd(args[1:], stdout, stderr)
	case "trace":
		return traceCmd(args[1:], stdout, stderr)
	case "compile":
		return compileCmd(args[1:], stdout, stderr)
	case "gen":
		return genCmd(args[1:], stdout, stderr)
	case "run":
		return runCmd(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "qd: unknown command %q\n\n%s", args[0], usage)
	return 2
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("qd "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
