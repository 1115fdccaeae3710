package trace

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
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
// returns nil, a *FormatError, or an error locating bad JSON. It bounds
// neither the size nor the events: data is already in memory.
func Validate(data []byte) error {
	_, err := parse(data, math.MaxInt)
	return err
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

// parse decodes and checks data, at most maxEvents events of it, and
// builds the Trace. The events are decoded one at a time, so that only
// the spans they make stay in memory beside data.
func parse(data []byte, maxEvents int) (*Trace, error) {
	data = bytes.TrimPrefix(data, []byte(bom))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, ErrEmpty
	}
	p := &parser{maxEvents: maxEvents}
	p.reset()
	var err error
	switch trimmed[0] {
	case '[':
		events := data
		if err := checkJSON(data); err != nil {
			// The Array Format lets a writer that died leave the array
			// open; close it and try again before giving up.
			fixed := append(slices.Clip(bytes.TrimSuffix(trimmed, []byte(","))), ']')
			if checkJSON(fixed) != nil {
				return nil, jsonError(data, err)
			}
			events = fixed
		}
		dec := json.NewDecoder(bytes.NewReader(events))
		err = p.events(dec)
	case '{':
		if err := checkJSON(data); err != nil {
			return nil, jsonError(data, err)
		}
		err = p.object(data)
	default:
		return nil, topLevelErr(trimmed[0])
	}
	if err != nil {
		return nil, err
	}
	probs, more := p.problems()
	if len(probs) > 0 {
		return nil, &FormatError{Problems: probs, More: more}
	}
	return p.trace(), nil
}

// checkJSON checks data's syntax and says where it breaks, without
// keeping anything of it.
func checkJSON(data []byte) error { return json.Unmarshal(data, new(skipJSON)) }

// skipJSON keeps nothing of the value it is unmarshalled from: Unmarshal
// checks the whole input's syntax first and reports where it fails, which
// json.Valid does not.
type skipJSON struct{}

func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// object reads the JSON Object Format, whose syntax is already checked:
// traceEvents is decoded event by event, the other members whole. Their
// problems are listed first, traceEvents's, displayTimeUnit's, then
// otherData's, whatever the order of the members; of a member given
// twice, the last counts, as json.Unmarshal into a map has it.
func (p *parser) object(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return jsonError(data, err)
	}
	var events string // the problem with traceEvents, if any
	var unit, other json.RawMessage
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return jsonError(data, err)
		}
		key, _ := tok.(string)
		if key == "traceEvents" {
			found, events = true, ""
			p.reset()
			if valueStart(data, dec.InputOffset()) == '[' {
				if err := p.events(dec); err != nil {
					return err
				}
				continue
			}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return jsonError(data, err)
		}
		switch key {
		case "traceEvents":
			events = "traceEvents: want an array, found " + kindOf(raw)
		case "displayTimeUnit":
			unit = raw
		case "otherData":
			other = raw
		}
	}
	switch {
	case !found:
		p.top = append(p.top, Problem{Event: -1, Msg: "missing traceEvents"})
	case events != "":
		p.top = append(p.top, Problem{Event: -1, Msg: events})
	}
	if unit != nil {
		var u string
		if json.Unmarshal(unit, &u) != nil || (u != "ms" && u != "ns") {
			p.top = append(p.top, Problem{Event: -1, Msg: fmt.Sprintf("displayTimeUnit: want \"ms\" or \"ns\", found %s", unit)})
		}
	}
	if other != nil && !isNull(other) {
		p.otherData(other)
	}
	return nil
}

// valueStart is the first byte of the member value after the key that
// ends at data[off:]: past white space and the colon.
func valueStart(data []byte, off int64) byte {
	rest := bytes.TrimLeft(data[off:], " \t\r\n:")
	if len(rest) == 0 {
		return 0
	}
	return rest[0]
}

// events reads an array of events from dec, which stands before it, one
// event at a time, and fails once there are more than p.maxEvents.
func (p *parser) events(dec *json.Decoder) error {
	if _, err := dec.Token(); err != nil { // [
		return fmt.Errorf("trace: invalid JSON: %w", err)
	}
	for i := 0; dec.More(); i++ {
		if i == p.maxEvents {
			return &LimitError{Limit: int64(p.maxEvents)}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("trace: invalid JSON: %w", err)
		}
		p.event(i, raw)
	}
	if _, err := dec.Token(); err != nil { // ]
		return fmt.Errorf("trace: invalid JSON: %w", err)
	}
	return nil
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
	maxEvents int
	top       []Problem // the file's top level's problems, a few at most
	probs     []Problem // the events' first maxProblems problems
	more      int       // and how many more
	lanes     map[[2]int64]*laneInfo
	procs     map[int64]string
	meta      map[string]string
}

// reset forgets the events read, for a traceEvents given again.
func (p *parser) reset() {
	p.probs, p.more = nil, 0
	p.lanes = make(map[[2]int64]*laneInfo)
	p.procs = make(map[int64]string)
}

func (p *parser) problem(ev int, msg string) {
	if ev < 0 {
		p.top = append(p.top, Problem{Event: ev, Msg: msg})
		return
	}
	if len(p.probs) < maxProblems {
		p.probs = append(p.probs, Problem{Event: ev, Msg: msg})
	} else {
		p.more++
	}
}

// problems lists the first maxProblems problems, the top level's first,
// and counts the rest.
func (p *parser) problems() ([]Problem, int) {
	all := append(slices.Clip(p.top), p.probs...)
	if len(all) <= maxProblems {
		return all, p.more
	}
	return all[:maxProblems], p.more + len(all) - maxProblems
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
