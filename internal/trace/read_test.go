package trace

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// endless is an input without end: head, then pad forever. It fails
// once it has given more than stop bytes, so that a reader that reads
// without bound fails the test instead of exhausting memory.
type endless struct {
	head        []byte
	block       []byte // pad, 64 KiB of it
	given, stop int64
}

func newEndless(head string, pad byte, stop int64) *endless {
	return &endless{head: []byte(head), block: bytes.Repeat([]byte{pad}, 64<<10), stop: stop}
}

func (e *endless) Read(p []byte) (int, error) {
	if e.given > e.stop {
		return 0, fmt.Errorf("read %d bytes of an endless input", e.given)
	}
	n := 0
	if e.given < int64(len(e.head)) {
		n = copy(p, e.head[e.given:])
	}
	for n < len(p) {
		n += copy(p[n:], e.block)
	}
	e.given += int64(n)
	return n, nil
}

// gzipOf compresses head followed by n bytes of pad.
func gzipOf(t *testing.T, head string, pad byte, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(head))
	zw.Write(bytes.Repeat([]byte{pad}, n))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// events is a trace of n instants in the Array Format.
func events(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"ph":"i","name":"e","ts":%d,"pid":1,"tid":1}`, i)
	}
	b.WriteString("]")
	return b.String()
}

// ReadChromeLimits stops at its bounds with a *LimitError, and refuses an
// input that cannot be JSON at its first bytes: a gzip bomb, an endless
// input and too many events fail without taking memory in proportion to
// what the input would give.
func TestReadLimits(t *testing.T) {
	const mib = 1 << 20
	lim := Limits{MaxBytes: mib, MaxEvents: 100}
	cases := []struct {
		name  string
		in    func() io.Reader
		lim   Limits
		limit *LimitError // the LimitError wanted, or nil
		want  string      // what the error says, or "" for none
	}{
		{"within", func() io.Reader { return strings.NewReader(events(100)) }, lim, nil, ""},
		{"too many events", func() io.Reader { return strings.NewReader(events(101)) }, lim, &LimitError{Limit: 100}, "more than 100 events, the limit"},
		{"events of the Object Format", func() io.Reader {
			return strings.NewReader(`{"traceEvents":` + events(101) + `}`)
		}, lim, &LimitError{Limit: 100}, "more than 100 events"},
		{"too many bytes", func() io.Reader { return strings.NewReader("[" + strings.Repeat(" ", mib) + "]") }, lim,
			&LimitError{Bytes: true, Limit: mib}, "more than 1 MiB of JSON (once decompressed), the limit"},
		{"exactly the bytes", func() io.Reader { return strings.NewReader("[" + strings.Repeat(" ", mib-2) + "]") }, lim, nil, ""},
		{"gzip bomb of JSON", func() io.Reader { return bytes.NewReader(gzipOf(t, "[", ' ', 8*mib)) }, lim,
			&LimitError{Bytes: true, Limit: mib}, "more than 1 MiB"},
		{"gzip bomb of zeros", func() io.Reader { return bytes.NewReader(gzipOf(t, "", 0, 8*mib)) }, lim, nil,
			`want a JSON object or array at the top level, found '\x00'`},
		{"endless zeros", func() io.Reader { return newEndless("", 0, 64*mib) }, lim, nil,
			`want a JSON object or array at the top level, found '\x00'`},
		{"endless spaces in an array", func() io.Reader { return newEndless("[", ' ', 64*mib) }, lim,
			&LimitError{Bytes: true, Limit: mib}, "more than 1 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr, err := ReadChromeLimits(c.in(), c.lim)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || tr != nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			var le *LimitError
			switch {
			case c.limit == nil && errors.As(err, &le):
				t.Errorf("%v is a *LimitError", err)
			case c.limit != nil && (!errors.As(err, &le) || *le != *c.limit):
				t.Errorf("%v is not %+v", err, *c.limit)
			}
		})
	}
}

// ReadChrome refuses an endless input that is not JSON, /dev/zero, at its
// first bytes: it used to read until memory ran out.
func TestReadChromeEndless(t *testing.T) {
	in := newEndless("", 0, 1<<20)
	_, err := ReadChrome(in)
	if err == nil || !strings.Contains(err.Error(), "want a JSON object or array") || in.given > 64<<10 {
		t.Fatalf("got %v after reading %d bytes, want the top level refused at once", err, in.given)
	}
}
