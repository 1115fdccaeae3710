package trace

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxNS bounds every ts and dur read, about 73 years, so that neither
// ts+dur nor the distance between two spans overflows a time.Duration.
const maxNS = 1 << 61

// maxProblems is how many problems a FormatError lists; the rest are
// counted, since a broken generator usually breaks every event alike.
const maxProblems = 20

// Problem is one way a trace breaks the trace-event format.
type Problem struct {
	// Event is the index in traceEvents of the offending event, or -1 for
	// the file's top level.
	Event int
	// Msg says what is wrong, naming the field.
	Msg string
}

func (p Problem) String() string {
	if p.Event < 0 {
		return p.Msg
	}
	return fmt.Sprintf("traceEvents[%d]: %s", p.Event, p.Msg)
}

// FormatError is the error ReadChrome and Validate return for a file that
// is JSON but not a valid trace.
type FormatError struct {
	Problems []Problem // the first maxProblems problems
	More     int       // problems found beyond those
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("trace: not a valid trace-event file: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "; and %d more problems", e.More)
	}
	return b.String()
}

// ErrEmpty is returned for an input with nothing but white space.
var ErrEmpty = errors.New("trace: empty input")

// Validate checks that data is a trace-event file whose events follow the
// rules this package relies on: the top level is an object with a
// traceEvents array (JSON Object Format) or an array of events (JSON Array
// Format, whose closing bracket may be missing); displayTimeUnit, if set,
// is "ms" or "ns"; every event is an object with a known phase "ph"; every
// event but metadata has a numeric "ts"; X, B, i, I, C and M events have a
// string "name"; X has a numeric "dur" ≥ 0; X, B and E have integer "pid"
// and "tid"; M thread_* events have a "tid"; name, cat and s are strings,
// s is g, p or t; args is an object; M *_name events carry a string
// args.name and *_sort_index an integer args.sort_index; C args are
// numbers. Times must lie within ±2^61 ns. ts need not increase. It
// returns nil, a *FormatError, or an error locating bad JSON.
func Validate(data []byte) error {
	_, err := parse(data)
	return err
}

// ReadChrome reads a trace-event file (either JSON format, optionally
// gzip-compressed) into a Trace, checking it as Validate does. X events
// become spans, i and I events instants, and B/E pairs on one thread
// spans; args task, group, launch and kind fill those fields (kind
// defaults to the category). Lanes come in the order of thread_sort_index
// within each process, then by tid; spans in time order.
func ReadChrome(r io.Reader) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("trace: reading: %w", err)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, gzipErr(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			return nil, gzipErr(err)
		}
	}
	return parse(data)
}

// gzipErr says that a file that starts as gzip does could not be
// decompressed, naming gzip once (its own errors already say "gzip: ").
func gzipErr(err error) error {
	if strings.HasPrefix(err.Error(), "gzip: ") {
		return fmt.Errorf("trace: %w", err)
	}
	return fmt.Errorf("trace: gzip: %w", err)
}

// jsonError turns an encoding/json error into one that says where in the
// input the problem is, as line and column.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return fmt.Errorf("trace: invalid JSON: %w", err)
	}
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return fmt.Errorf("trace: invalid JSON at line %d, column %d (byte %d): %w", line, col, off, err)
}

// kindOf names the JSON type of a raw value, for messages.
func kindOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// parse decodes and checks data and builds the Trace.
func parse(data []byte) (*Trace, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, ErrEmpty
	}
	p := &parser{lanes: make(map[[2]int64]*laneInfo), procs: make(map[int64]string)}
	var events []json.RawMessage
	switch trimmed[0] {
	case '[':
		if err := json.Unmarshal(data, &events); err != nil {
			// The Array Format lets a writer that died leave the array
			// open; close it and try again before giving up.
			fixed := append(bytes.TrimSuffix(trimmed, []byte(",")), ']')
			if json.Unmarshal(fixed, &events) != nil {
				return nil, jsonError(data, err)
			}
		}
	case '{':
		var top map[string]json.RawMessage
		if err := json.Unmarshal(data, &top); err != nil {
			return nil, jsonError(data, err)
		}
		raw, ok := top["traceEvents"]
		switch {
		case !ok:
			p.problem(-1, "missing traceEvents")
		case len(raw) == 0 || raw[0] != '[':
			p.problem(-1, "traceEvents: want an array, found "+kindOf(raw))
		default:
			if err := json.Unmarshal(raw, &events); err != nil {
				return nil, jsonError(data, err)
			}
		}
		if raw, ok := top["displayTimeUnit"]; ok {
			var u string
			if json.Unmarshal(raw, &u) != nil || (u != "ms" && u != "ns") {
				p.problem(-1, fmt.Sprintf("displayTimeUnit: want \"ms\" or \"ns\", found %s", raw))
			}
		}
		if raw, ok := top["otherData"]; ok && !isNull(raw) {
			p.otherData(raw)
		}
	default:
		return nil, fmt.Errorf("trace: want a JSON object or array at the top level, found %q", trimmed[0])
	}
	for i, raw := range events {
		p.event(i, raw)
	}
	if len(p.probs) > 0 {
		return nil, &FormatError{Problems: p.probs, More: p.more}
	}
	return p.trace(), nil
}

// laneInfo gathers one (pid, tid) track while parsing.
type laneInfo struct {
	name    string
	sort    int64
	hasSort bool
	spans   []Span
	open    []Span // B events awaiting their E
}

type parser struct {
	probs []Problem
	more  int
	lanes map[[2]int64]*laneInfo
	procs map[int64]string
	meta  map[string]string
}

func (p *parser) problem(ev int, msg string) {
	if len(p.probs) < maxProblems {
		p.probs = append(p.probs, Problem{Event: ev, Msg: msg})
	} else {
		p.more++
	}
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func (p *parser) otherData(raw json.RawMessage) {
	var m map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		p.problem(-1, "otherData: want an object, found "+kindOf(raw))
		return
	}
	for k, v := range m {
		if p.meta == nil {
			p.meta = make(map[string]string)
		}
		var s string
		if v[0] == '"' && json.Unmarshal(v, &s) == nil {
			p.meta[k] = s
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			p.meta[k] = b.String()
		}
	}
}

// phases are the trace-event phases; anything else is a format error.
const phases = "BEXiICbneSTpFstfPNODMVvRc()"

// event checks event i and adds what it holds to the lanes.
func (p *parser) event(i int, raw json.RawMessage) {
	if len(raw) == 0 || raw[0] != '{' {
		p.problem(i, "want an object, found "+kindOf(raw))
		return
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		p.problem(i, "bad event: "+err.Error())
		return
	}
	for k, v := range m {
		if isNull(v) {
			delete(m, k) // null counts as absent, as Chrome's importer treats it
		}
	}
	ph, ok, msg := str(m, "ph")
	switch {
	case msg != "":
		p.problem(i, msg)
		return
	case !ok:
		p.problem(i, "missing ph")
		return
	case len(ph) != 1 || !strings.Contains(phases, ph):
		p.problem(i, fmt.Sprintf("ph %q is not a trace-event phase", ph))
		return
	}
	bad := false
	fail := func(msg string) {
		p.problem(i, fmt.Sprintf("%s event: %s", ph, msg))
		bad = true
	}
	need := func(key string) bool {
		if _, ok := m[key]; !ok {
			fail("missing " + key)
			return false
		}
		return true
	}

	name, _, msg := str(m, "name")
	if msg != "" {
		fail(msg)
	}
	cat, _, msg := str(m, "cat")
	if msg != "" {
		fail(msg)
	}
	var args map[string]json.RawMessage
	if raw, ok := m["args"]; ok {
		if raw[0] != '{' || json.Unmarshal(raw, &args) != nil {
			fail("args: want an object, found " + kindOf(raw))
		}
	}
	pid, _, msg := integer(m, "pid")
	if msg != "" {
		fail(msg)
	}
	tid, _, msg := integer(m, "tid")
	if msg != "" {
		fail(msg)
	}
	ts, hasTS, msg := micros(m, "ts")
	if msg != "" {
		fail(msg)
	}
	if ph != "M" && !hasTS && msg == "" {
		fail("missing ts")
	}
	switch ph {
	case "X", "B", "i", "I", "C", "M":
		need("name")
	}
	switch ph {
	case "X", "B", "E":
		need("pid")
		need("tid")
	case "C":
		need("pid")
	}
	var dur int64
	if ph == "X" && need("dur") {
		d, _, msg := micros(m, "dur")
		switch {
		case msg != "":
			fail(msg)
		case d < 0:
			fail(fmt.Sprintf("dur %s is negative", m["dur"]))
		}
		dur = d
	}
	if ph == "i" || ph == "I" {
		s, ok, msg := str(m, "s")
		if msg != "" {
			fail(msg)
		} else if ok && s != "g" && s != "p" && s != "t" {
			fail(fmt.Sprintf("s %q: want \"g\", \"p\" or \"t\"", s))
		}
	}
	if ph == "C" {
		if need("args") && args != nil {
			for _, k := range slices.Sorted(maps.Keys(args)) {
				if v := args[k]; kindOf(v) != "a number" {
					fail(fmt.Sprintf("args.%s: counter values must be numbers, found %s", k, kindOf(v)))
				}
			}
		}
	}
	if ph == "M" {
		if strings.HasPrefix(name, "thread_") {
			need("tid")
		}
		if need("args") && args != nil {
			switch name {
			case "process_name", "thread_name":
				if _, ok, msg := str(args, "name"); msg != "" || !ok {
					fail(name + ": args.name must be a string")
				}
			case "process_sort_index", "thread_sort_index":
				if _, ok, msg := integer(args, "sort_index"); msg != "" || !ok {
					fail(name + ": args.sort_index must be an integer")
				}
			}
		}
	}
	if bad {
		return
	}

	key := [2]int64{pid, tid}
	lane := func() *laneInfo {
		l := p.lanes[key]
		if l == nil {
			l = &laneInfo{}
			p.lanes[key] = l
		}
		return l
	}
	span := func() Span {
		s := Span{Kernel: name, Kind: cat, StreamID: uint64(tid), Start: time.Duration(ts)}
		if k, ok, _ := str(args, "kind"); ok {
			s.Kind = k
		}
		if v, ok, _ := integer(args, "task"); ok {
			s.Task = int(v)
		}
		if v, ok, _ := integer(args, "group"); ok {
			s.Group = int(v)
		}
		if v, ok, _ := integer(args, "launch"); ok {
			s.Launch = uint64(v)
		}
		return s
	}
	switch ph {
	case "X":
		s := span()
		s.End = s.Start + time.Duration(dur)
		l := lane()
		l.spans = append(l.spans, s)
	case "i", "I":
		s := span()
		s.End, s.Instant = s.Start, true
		l := lane()
		l.spans = append(l.spans, s)
	case "B":
		l := lane()
		l.open = append(l.open, span())
	case "E":
		// An E closes the latest open B of its thread; one with no B is
		// ignored, as viewers do.
		if l := p.lanes[key]; l != nil && len(l.open) > 0 {
			s := l.open[len(l.open)-1]
			l.open = l.open[:len(l.open)-1]
			s.End = max(time.Duration(ts), s.Start)
			l.spans = append(l.spans, s)
		}
	case "M":
		switch name {
		case "process_name":
			p.procs[pid], _, _ = str(args, "name")
		case "thread_name":
			lane().name, _, _ = str(args, "name")
		case "thread_sort_index":
			l := lane()
			l.sort, l.hasSort, _ = integer(args, "sort_index")
		}
	}
}

// trace assembles the parsed lanes.
func (p *parser) trace() *Trace {
	keys := make([][2]int64, 0, len(p.lanes))
	for k := range p.lanes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int64) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		la, lb := p.lanes[a], p.lanes[b]
		// Lanes with a sort index come first, by index, as in Perfetto.
		if la.hasSort != lb.hasSort {
			if la.hasSort {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(la.sort, lb.sort); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	t := &Trace{Meta: p.meta, Lanes: make([]Lane, 0, len(keys))}
	pids := make([]int64, 0, len(p.procs))
	for pid := range p.procs {
		pids = append(pids, pid)
	}
	if len(pids) > 0 {
		t.Process = p.procs[slices.Min(pids)]
	}
	for _, k := range keys {
		l := p.lanes[k]
		for i := range l.spans {
			l.spans[i].Stream = l.name
		}
		slices.SortFunc(l.spans, compareSpans)
		t.Lanes = append(t.Lanes, Lane{Name: l.name, PID: k[0], TID: k[1], Spans: l.spans})
	}
	return t
}

// str reads m[key] as a string: its value, whether it is present, and a
// message when it is present but not a string.
func str(m map[string]json.RawMessage, key string) (string, bool, string) {
	raw, ok := m[key]
	if !ok {
		return "", false, ""
	}
	var s string
	if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false, fmt.Sprintf("%s: want a string, found %s", key, kindOf(raw))
	}
	return s, true, ""
}

// integer reads m[key] as an integer (1, -3, 2.0 and 1e3 are integers).
func integer(m map[string]json.RawMessage, key string) (int64, bool, string) {
	raw, ok := m[key]
	if !ok {
		return 0, false, ""
	}
	if kindOf(raw) != "a number" {
		return 0, false, fmt.Sprintf("%s: want an integer, found %s", key, kindOf(raw))
	}
	if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return v, true, ""
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, false, fmt.Sprintf("%s: want an integer, found %s", key, raw)
	}
	return int64(f), true, ""
}

// micros reads m[key], a time in microseconds, as nanoseconds. A plain
// decimal is converted exactly (what WriteChrome writes comes back to the
// nanosecond, however long the trace); other forms go through float64.
func micros(m map[string]json.RawMessage, key string) (int64, bool, string) {
	raw, ok := m[key]
	if !ok {
		return 0, false, ""
	}
	if kindOf(raw) != "a number" {
		return 0, false, fmt.Sprintf("%s: want a number, found %s", key, kindOf(raw))
	}
	if ns, ok := exactMicros(string(raw)); ok {
		return ns, true, ""
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.Abs(f*1000) > maxNS {
		return 0, false, fmt.Sprintf("%s: %s µs is out of range", key, raw)
	}
	return int64(math.Round(f * 1000)), true, ""
}

// exactMicros converts a decimal without exponent, -?D+(.D+)?, of
// microseconds to nanoseconds, rounding past the third decimal half away
// from zero. It reports false for other forms and for times beyond maxNS.
func exactMicros(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" || len(ip) > 16 || strings.Trim(ip, "0123456789") != "" || strings.Trim(fp, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseInt(ip, 10, 64)
	if err != nil {
		return 0, false
	}
	v *= 1000
	for i, scale := 0, int64(100); i < 3; i, scale = i+1, scale/10 {
		if i < len(fp) {
			v += int64(fp[i]-'0') * scale
		}
	}
	if len(fp) > 3 && fp[3] >= '5' {
		v++
	}
	if v > maxNS {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
