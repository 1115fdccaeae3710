package trace

import (
	"bufio"
	"cmp"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Trace is a recorded trace: named lanes of spans, one lane per stream.
type Trace struct {
	// Process is the name of the trace's process track: the device.
	Process string
	// Lanes are the tracks, in display order.
	Lanes []Lane
	// Meta is the file's otherData (values that were not strings are kept
	// as compact JSON text); nil when there is none.
	Meta map[string]string
}

// Lane is one track of a trace: a stream, which the Chrome format calls a
// thread.
type Lane struct {
	// Name is the track's name ("" when the file named none).
	Name string
	// PID and TID are the Chrome process and thread ids; TID is the
	// stream's id.
	PID, TID int64
	// Spans are the lane's tasks and instants in time order.
	Spans []Span
}

// WriteTo writes the recorded spans as Chrome trace-event JSON (see
// WriteChrome). It implements io.WriterTo.
func (r *Recorder) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := WriteChrome(cw, r.Trace())
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteChrome writes t in the Chrome trace-event JSON Object Format, one
// event per line: first the metadata events (process_name for each
// process, then thread_name and thread_sort_index for each lane, so that
// Perfetto shows the lanes named and in t's order), then one event per
// span in time order: a complete event ("ph":"X") for a task, an instant
// ("ph":"i", thread scope) for an instant. ts and dur are microseconds
// written exactly to the nanosecond; args hold task, group, kind and, when
// not 0, launch; cat is the kind ("task" when empty).
func WriteChrome(w io.Writer, t *Trace) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := make([]byte, 0, 512)
	b = append(b, `{"displayTimeUnit":"ns","otherData":{`...)
	keys := make([]string, 0, len(t.Meta))
	for k := range t.Meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, t.Meta[k])
	}
	b = append(b, "},\n\"traceEvents\":["...)
	first := true
	// sep starts each event on its own line, so files diff well.
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '\n')
	}
	flush := func() error {
		_, err := bw.Write(b)
		b = b[:0]
		return err
	}

	if t.Process != "" {
		pids := []int64{1}
		if len(t.Lanes) > 0 {
			pids = pids[:0]
			for _, l := range t.Lanes {
				pids = append(pids, l.PID)
			}
			slices.Sort(pids)
			pids = slices.Compact(pids)
		}
		for _, pid := range pids {
			sep()
			b = append(b, `{"ph":"M","name":"process_name","pid":`...)
			b = strconv.AppendInt(b, pid, 10)
			b = append(b, `,"tid":0,"args":{"name":`...)
			b = appendString(b, t.Process)
			b = append(b, "}}"...)
		}
	}
	for i, l := range t.Lanes {
		if l.Name != "" {
			sep()
			b = append(b, `{"ph":"M","name":"thread_name","pid":`...)
			b = appendPIDTID(b, l)
			b = append(b, `,"args":{"name":`...)
			b = appendString(b, l.Name)
			b = append(b, "}}"...)
		}
		sep()
		b = append(b, `{"ph":"M","name":"thread_sort_index","pid":`...)
		b = appendPIDTID(b, l)
		b = append(b, `,"args":{"sort_index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "}}"...)
	}
	if err := flush(); err != nil {
		return err
	}

	// Merge the lanes' spans by start time; ties keep lane order, then the
	// lane's own (sorted) order, so the output is deterministic.
	type ref struct{ lane, span int }
	n := 0
	for _, l := range t.Lanes {
		n += len(l.Spans)
	}
	refs := make([]ref, 0, n)
	for li, l := range t.Lanes {
		for si := range l.Spans {
			refs = append(refs, ref{li, si})
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int {
		return cmp.Compare(t.Lanes[a.lane].Spans[a.span].Start, t.Lanes[b.lane].Spans[b.span].Start)
	})
	for _, rf := range refs {
		l := t.Lanes[rf.lane]
		s := l.Spans[rf.span]
		sep()
		if s.Instant {
			b = append(b, `{"ph":"i","s":"t","name":`...)
		} else {
			b = append(b, `{"ph":"X","name":`...)
		}
		b = appendString(b, s.Kernel)
		b = append(b, `,"cat":`...)
		cat := s.Kind
		if cat == "" {
			cat = "task"
		}
		b = appendString(b, cat)
		b = append(b, `,"pid":`...)
		b = appendPIDTID(b, l)
		b = append(b, `,"ts":`...)
		b = appendMicros(b, int64(s.Start))
		if !s.Instant {
			b = append(b, `,"dur":`...)
			b = appendMicros(b, int64(s.End-s.Start))
		}
		b = append(b, `,"args":{"task":`...)
		b = strconv.AppendInt(b, int64(s.Task), 10)
		b = append(b, `,"group":`...)
		b = strconv.AppendInt(b, int64(s.Group), 10)
		b = append(b, `,"kind":`...)
		b = appendString(b, s.Kind)
		if s.Launch != 0 {
			b = append(b, `,"launch":`...)
			b = strconv.AppendUint(b, s.Launch, 10)
		}
		b = append(b, "}}"...)
		if len(b) > 32<<10 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	b = append(b, "\n]}\n"...)
	if err := flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// appendPIDTID appends l's pid, then ,"tid": and its tid.
func appendPIDTID(b []byte, l Lane) []byte {
	b = strconv.AppendInt(b, l.PID, 10)
	b = append(b, `,"tid":`...)
	return strconv.AppendInt(b, l.TID, 10)
}

// appendMicros appends ns nanoseconds as microseconds, exactly: integer
// arithmetic rather than a float, so that a reader recovers the same
// nanoseconds and equal traces give equal bytes.
func appendMicros(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u
	}
	b = strconv.AppendUint(b, u/1000, 10)
	if f := u % 1000; f != 0 {
		d := [4]byte{'.', byte('0' + f/100), byte('0' + f/10%10), byte('0' + f%10)}
		end := 4
		for d[end-1] == '0' {
			end--
		}
		b = append(b, d[:end]...)
	}
	return b
}

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json reads it, so the output is valid JSON and writing what
// was read gives the same bytes.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
