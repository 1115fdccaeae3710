package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"strings"
)

// ReadChrome reads a trace-event file (either JSON format, optionally
// gzip-compressed) into a Trace, checking it as Validate does. X events
// become spans, i and I events instants, and B/E pairs on one thread
// spans; args task, group, launch and kind fill those fields (kind
// defaults to the category). Lanes come in the order of thread_sort_index
// within each process, then by tid; spans in time order. It reads within
// the default Limits; ReadChromeLimits takes others.
func ReadChrome(r io.Reader) (*Trace, error) { return ReadChromeLimits(r, Limits{}) }

// Limits bound what ReadChromeLimits takes in. The JSON is held in memory
// whole and every event becomes a span, so without bounds a small gzip
// bomb or an endless input (/dev/zero) exhausts memory before any error:
// a 1 MB gzip file of zeros took 2.7 GB.
type Limits struct {
	// MaxBytes bounds the JSON read, counted after decompression
	// (≤ 0: DefaultMaxBytes).
	MaxBytes int64
	// MaxEvents bounds the entries of traceEvents (≤ 0: DefaultMaxEvents).
	MaxEvents int
}

const (
	// DefaultMaxBytes is three times what a full Recorder writes
	// (DefaultMaxSpans spans take about 160 MB), so that longer names fit.
	DefaultMaxBytes = 512 << 20
	// DefaultMaxEvents is twice DefaultMaxSpans: a full Recorder's spans
	// and its metadata fit, and reading them takes about 1 GB.
	DefaultMaxEvents = 2 * DefaultMaxSpans
)

// LimitError is the error ReadChromeLimits returns for an input beyond
// its Limits.
type LimitError struct {
	Bytes bool  // the bound passed is MaxBytes; otherwise MaxEvents
	Limit int64 // the bound's value
}

func (e *LimitError) Error() string {
	if e.Bytes {
		return fmt.Sprintf("trace: more than %s of JSON (once decompressed), the limit", sizeText(e.Limit))
	}
	return fmt.Sprintf("trace: more than %d events, the limit", e.Limit)
}

// sizeText writes n bytes in MiB when it is a whole number of them.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadChromeLimits is ReadChrome within lim: an input that holds more
// JSON or more events fails with a *LimitError as soon as the bound is
// passed, and one that does not start as JSON does (or as gzip) fails at
// its first bytes.
func ReadChromeLimits(r io.Reader, lim Limits) (*Trace, error) {
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = DefaultMaxBytes
	}
	if lim.MaxEvents <= 0 {
		lim.MaxEvents = DefaultMaxEvents
	}
	br := bufio.NewReader(r)
	var in io.Reader = br
	gzipped := false
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, gzipErr(err)
		}
		in, gzipped = zr, true
	}
	// Refuse what cannot be JSON before reading it all: /dev/zero would
	// otherwise be read to the limit first.
	head := bufio.NewReader(in)
	if start, _ := head.Peek(4096); len(start) > 0 {
		if c, ok := firstByte(start); ok && c != '{' && c != '[' {
			return nil, topLevelErr(c)
		}
	}
	data, err := io.ReadAll(io.LimitReader(head, min(lim.MaxBytes, math.MaxInt64-1)+1))
	switch {
	case err != nil && gzipped:
		return nil, gzipErr(err)
	case err != nil:
		return nil, fmt.Errorf("trace: reading: %w", err)
	case int64(len(data)) > lim.MaxBytes:
		return nil, &LimitError{Bytes: true, Limit: lim.MaxBytes}
	}
	return parse(data, lim.MaxEvents)
}

// firstByte is the first byte of start past a byte order mark and white
// space, if start holds one.
func firstByte(start []byte) (byte, bool) {
	rest := bytes.TrimLeft(bytes.TrimPrefix(start, []byte(bom)), " \t\r\n")
	if len(rest) == 0 {
		return 0, false
	}
	return rest[0], true
}

func topLevelErr(c byte) error {
	return fmt.Errorf("trace: want a JSON object or array at the top level, found %q", c)
}

// bom is the UTF-8 byte order mark, which may open a JSON file.
const bom = "\xef\xbb\xbf"

// gzipErr says that a file that starts as gzip does could not be
// decompressed, naming gzip once (its own errors already say "gzip: ").
func gzipErr(err error) error {
	if strings.HasPrefix(err.Error(), "gzip: ") {
		return fmt.Errorf("trace: %w", err)
	}
	return fmt.Errorf("trace: gzip: %w", err)
}
