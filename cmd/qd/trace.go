package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quadrants-go/qd/internal/trace"
)

const traceUsage = `usage: qd trace [-o out.svg] [-width N] [-title TEXT] [-max-mib N] [-max-events N] FILE.json

Render a trace that qd recorded (Chrome trace-event JSON, the file Perfetto
opens; gzip-compressed too) as an SVG timeline with one lane per stream.
The SVG goes to FILE with its extension replaced by .svg unless -o says
otherwise; -o - writes it to standard output. A file of more JSON (once
decompressed) or more events than the limits is refused; the defaults
hold the largest trace qd records, with room to spare.

flags:
`

// maxTraceMiB and maxTraceEvents bound -max-mib (a TiB) and -max-events
// (a billion), so that the limits stay far from overflow.
const (
	maxTraceMiB    = 1 << 20
	maxTraceEvents = 1 << 30
)

// traceCmd is the trace verb: it reads a trace file, checks it and writes
// its SVG timeline. Usage errors exit 2; a file that cannot be read,
// parsed or written exits 1.
func traceCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("trace", stderr)
	out := fs.String("o", "", "output `file`; - for standard output (default: FILE with extension .svg)")
	width := fs.Int("width", trace.DefaultSVGWidth, "image width in pixels")
	title := fs.String("title", "", "image title (default: \"qd trace\" and the device)")
	maxMiB := fs.Int64("max-mib", trace.DefaultMaxBytes>>20, "read at most `N` MiB of JSON, counted after decompression")
	maxEvents := fs.Int("max-events", trace.DefaultMaxEvents, "read at most `N` events")
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, traceUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	// The flag package prints its error and then calls Usage; help goes to
	// stdout (it was asked for), usage after an error to stderr, so Usage
	// itself prints nothing and the callers below decide.
	fs.Usage = func() {}

	// Flags may come after the file too (qd trace t.json -o t.svg), which
	// the flag package alone does not allow: parse, take one positional
	// argument, parse the rest, until none is left or "--" ends the flags.
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(stdout)
				return 0
			}
			fmt.Fprintln(stderr)
			printUsage(stderr)
			return 2
		}
		rest := fs.Args()
		if consumed := args[:len(args)-len(rest)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			files = append(files, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		files = append(files, rest[0])
		args = rest[1:]
	}

	usageError := func(msg string) int {
		fmt.Fprintf(stderr, "qd trace: %s\n\n", msg)
		printUsage(stderr)
		return 2
	}
	switch {
	case len(files) == 0:
		return usageError("missing FILE: the trace to render")
	case len(files) > 1:
		return usageError(fmt.Sprintf("one FILE at a time, got %d: %s", len(files), strings.Join(files, " ")))
	case *width < trace.MinSVGWidth || *width > trace.MaxSVGWidth:
		return usageError(fmt.Sprintf("-width %d is outside [%d, %d]", *width, trace.MinSVGWidth, trace.MaxSVGWidth))
	case *maxMiB < 1 || *maxMiB > maxTraceMiB:
		return usageError(fmt.Sprintf("-max-mib %d is outside [1, %d]", *maxMiB, maxTraceMiB))
	case *maxEvents < 1 || *maxEvents > maxTraceEvents:
		return usageError(fmt.Sprintf("-max-events %d is outside [1, %d]", *maxEvents, maxTraceEvents))
	}
	in := files[0]
	dst := *out
	if dst == "" {
		base := strings.TrimSuffix(in, ".gz")
		dst = strings.TrimSuffix(base, filepath.Ext(base)) + ".svg"
		if filepath.Clean(dst) == filepath.Clean(in) {
			return usageError(fmt.Sprintf("the default output %s is the input itself; name one with -o", dst))
		}
	}

	f, err := os.Open(in)
	if err != nil {
		fmt.Fprintf(stderr, "qd trace: %v\n", err)
		return 1
	}
	t, err := trace.ReadChromeLimits(f, trace.Limits{MaxBytes: *maxMiB << 20, MaxEvents: *maxEvents})
	f.Close()
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "trace: ")
		if le, ok := errors.AsType[*trace.LimitError](err); ok {
			flag := "-max-events"
			if le.Bytes {
				flag = "-max-mib"
			}
			msg += "; " + flag + " raises it"
		}
		fmt.Fprintf(stderr, "qd trace: %s: %s\n", in, msg)
		return 1
	}
	opts := trace.SVGOptions{Width: *width, Title: *title}
	if dst == "-" {
		if err := trace.RenderSVG(stdout, t, opts); err != nil {
			fmt.Fprintf(stderr, "qd trace: writing the SVG: %v\n", err)
			return 1
		}
		return 0
	}
	if err := writeSVG(dst, t, opts); err != nil {
		fmt.Fprintf(stderr, "qd trace: %v\n", err)
		return 1
	}
	spans := 0
	for _, l := range t.Lanes {
		spans += len(l.Spans)
	}
	fmt.Fprintf(stdout, "qd trace: wrote %s: %d lanes, %d spans\n", dst, len(t.Lanes), spans)
	return 0
}

// writeSVG renders t into a file beside dst and renames it to dst once
// whole, so that a failure never leaves half an SVG or spoils an older
// one. The SVG is written as it is rendered: held in memory, it took
// several times the trace (about 250 bytes a span), and a trace may have
// millions of spans.
func writeSVG(dst string, t *trace.Trace, opts trace.SVGOptions) error {
	tmp := fmt.Sprintf("%s.%d.tmp", dst, os.Getpid())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("writing %s: %w", dst, errors.Unwrap(err)) // the cause, not the temporary's name
	}
	err = trace.RenderSVG(f, t, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}
