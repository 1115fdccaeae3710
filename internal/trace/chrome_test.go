package trace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	r := NewRecorder(`CUDA: "GPU" <0> & co`, 0)
	r.SetMeta("arch", "cuda")
	r.NameStream(99, "named <99>")
	record(r, 5, 200)
	r.Span(Span{StreamID: 99, Kernel: "k<&>\"'\n\x01\xff", Kind: "copy", Start: -5, End: 1<<40 + 1})
	r.Span(Span{StreamID: 99, Kernel: "long", Start: 1 << 60, End: 1<<60 + 123456789})
	want := r.Trace()
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if err := Validate(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadChrome(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// Invalid UTF-8 becomes U+FFFD on the way, as JSON requires.
	for i := range want.Lanes {
		for j := range want.Lanes[i].Spans {
			s := &want.Lanes[i].Spans[j]
			s.Kernel = strings.ToValidUTF8(s.Kernel, "\uFFFD")
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\ngot  %+v\nwant %+v", got, want)
	}
	var again bytes.Buffer
	if err := WriteChrome(&again, got); err != nil {
		t.Fatal(err)
	}
	if again.String() != buf.String() {
		t.Fatalf("writing the read trace gives different bytes:\n%s\n%s", again.String(), buf.String())
	}
}

// TestChromeShape checks the JSON against what Perfetto needs, reading it
// with encoding/json rather than our own reader.
func TestChromeShape(t *testing.T) {
	r := NewRecorder("CPU", 0)
	r.Span(Span{Stream: "default", StreamID: 0, Kernel: "saxpy", Kind: "parallel", Task: 1, Group: 0, Launch: 4, Start: 1500, End: 4000})
	r.Span(Span{Stream: "stream 3", StreamID: 3, Kernel: "fill", Kind: "serial", Task: 0, Group: 2, Start: 2000, End: 2001})
	r.Span(Span{Stream: "stream 3", StreamID: 3, Kernel: "wait", Kind: "event", Start: 1000, Instant: true})
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents     []map[string]any  `json:"traceEvents"`
		DisplayTimeUnit string            `json:"displayTimeUnit"`
		OtherData       map[string]string `json:"otherData"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if doc.DisplayTimeUnit != "ns" || doc.OtherData["epoch"] == "" {
		t.Fatalf("top level: %q %v", doc.DisplayTimeUnit, doc.OtherData)
	}
	threads := map[float64]string{}
	var xs, is []map[string]any
	procs := 0
	for _, e := range doc.TraceEvents {
		switch e["ph"] {
		case "M":
			args := e["args"].(map[string]any)
			switch e["name"] {
			case "process_name":
				procs++
				if args["name"] != "CPU" {
					t.Errorf("process_name %v", args)
				}
			case "thread_name":
				threads[e["tid"].(float64)] = args["name"].(string)
			}
		case "X":
			xs = append(xs, e)
		case "i":
			is = append(is, e)
		}
	}
	if procs != 1 || !reflect.DeepEqual(threads, map[float64]string{0: "default", 3: "stream 3"}) {
		t.Fatalf("metadata: %d processes, threads %v", procs, threads)
	}
	if len(xs) != 2 || len(is) != 1 {
		t.Fatalf("%d X and %d i events", len(xs), len(is))
	}
	x := xs[0]
	if x["name"] != "saxpy" || x["cat"] != "parallel" || x["ts"] != 1.5 || x["dur"] != 2.5 || x["pid"] != 1.0 || x["tid"] != 0.0 {
		t.Fatalf("X event %v", x)
	}
	if a := x["args"].(map[string]any); a["task"] != 1.0 || a["group"] != 0.0 || a["kind"] != "parallel" || a["launch"] != 4.0 {
		t.Fatalf("X args %v", a)
	}
	if xs[1]["dur"] != 0.001 || xs[1]["ts"] != 2.0 {
		t.Fatalf("X event %v", xs[1])
	}
	if is[0]["s"] != "t" || is[0]["ts"] != 1.0 || is[0]["tid"] != 3.0 {
		t.Fatalf("i event %v", is[0])
	}
}

func TestValidateCatches(t *testing.T) {
	const ok = `{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":2}`
	cases := []struct{ name, doc, want string }{
		{"empty", "  ", "empty input"},
		{"not JSON", `{"traceEvents":[` + ok + `,]}`, "invalid JSON at line 1, column 70 (byte 70)"},
		{"bad JSON line", "{\n\"traceEvents\": [\n  {\"ph\": \"X\" \"name\": 1}]}", "invalid JSON at line 3, column 14"},
		{"scalar top", `42`, "want a JSON object or array"},
		{"no traceEvents", `{"events":[]}`, "missing traceEvents"},
		{"traceEvents not array", `{"traceEvents":{}}`, "traceEvents: want an array, found an object"},
		{"displayTimeUnit", `{"traceEvents":[],"displayTimeUnit":"s"}`, "displayTimeUnit"},
		{"otherData", `{"traceEvents":[],"otherData":3}`, "otherData: want an object"},
		{"event not object", `[1]`, "traceEvents[0]: want an object, found a number"},
		{"missing ph", `[{"name":"k","ts":1}]`, "missing ph"},
		{"ph not string", `[{"ph":1}]`, "ph: want a string"},
		{"unknown ph", `[{"ph":"Q","ts":1}]`, `ph "Q" is not a trace-event phase`},
		{"missing ts", `[{"ph":"X","name":"k","pid":1,"tid":1,"dur":1}]`, "X event: missing ts"},
		{"ts string", `[{"ph":"X","name":"k","pid":1,"tid":1,"ts":"1","dur":1}]`, "ts: want a number, found a string"},
		{"ts huge", `[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1e300,"dur":1}]`, "ts: 1e300 µs is out of range"},
		{"missing dur", `[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1}]`, "X event: missing dur"},
		{"negative dur", `[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":-0.5}]`, "dur -0.5 is negative"},
		{"missing name", `[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1}]`, "X event: missing name"},
		{"name not string", `[{"ph":"i","name":["k"],"ts":1}]`, "name: want a string, found an array"},
		{"cat not string", `[{"ph":"i","name":"k","cat":1,"ts":1}]`, "cat: want a string"},
		{"missing tid", `[{"ph":"B","name":"k","pid":1,"ts":1}]`, "B event: missing tid"},
		{"fractional pid", `[{"ph":"E","pid":1.5,"tid":1,"ts":1}]`, "pid: want an integer, found 1.5"},
		{"bad scope", `[{"ph":"i","name":"k","s":"x","ts":1}]`, `s "x"`},
		{"args not object", `[{"ph":"X","name":"k","pid":1,"tid":1,"ts":1,"dur":1,"args":[]}]`, "args: want an object, found an array"},
		{"thread_name args", `[{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":3}}]`, "thread_name: args.name must be a string"},
		{"thread_name tid", `[{"ph":"M","name":"thread_name","pid":1,"args":{"name":"x"}}]`, "M event: missing tid"},
		{"sort index", `[{"ph":"M","name":"thread_sort_index","pid":1,"tid":1,"args":{"sort_index":"a"}}]`, "args.sort_index must be an integer"},
		{"metadata args", `[{"ph":"M","name":"process_name","pid":1}]`, "M event: missing args"},
		{"counter", `[{"ph":"C","name":"mem","pid":1,"ts":1,"args":{"bytes":"x"}}]`, "args.bytes: counter values must be numbers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Validate([]byte(c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate(%s) = %v, want an error containing %q", c.doc, err, c.want)
			}
			if _, rerr := ReadChrome(strings.NewReader(c.doc)); rerr == nil || rerr.Error() != err.Error() {
				t.Fatalf("ReadChrome disagrees with Validate: %v", rerr)
			}
		})
	}
	// The events index is named, and many problems are summed up.
	var b strings.Builder
	b.WriteString(`{"traceEvents":[` + ok)
	for range 30 {
		b.WriteString(`,{"ph":"X"}`)
	}
	b.WriteString("]}")
	err := Validate([]byte(b.String()))
	var fe *FormatError
	if !errors.As(err, &fe) || len(fe.Problems) != maxProblems || fe.More == 0 || fe.Problems[0].Event != 1 {
		t.Fatalf("Validate = %v", err)
	}
	if err := Validate([]byte(`{"traceEvents":[` + ok + `],"displayTimeUnit":"ms"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestReadForeignForms(t *testing.T) {
	// JSON Array Format, unclosed as a crashed writer leaves it, with B/E
	// pairs, an instant without scope, a counter, and ts not monotonic.
	doc := `[
{"ph":"M","name":"thread_name","pid":2,"tid":5,"args":{"name":"worker"}},
{"ph":"B","name":"outer","cat":"c","pid":2,"tid":5,"ts":10},
{"ph":"B","name":"inner","pid":2,"tid":5,"ts":12,"args":{"task":3}},
{"ph":"E","pid":2,"tid":5,"ts":14},
{"ph":"E","pid":2,"tid":5,"ts":20},
{"ph":"E","pid":2,"tid":5,"ts":21},
{"ph":"X","name":"early","pid":2,"tid":6,"ts":1.5,"dur":1e0,"args":null},
{"ph":"I","name":"mark","pid":2,"tid":6,"ts":3},
{"ph":"C","name":"mem","pid":2,"ts":3,"args":{"bytes":12}},
`
	got, err := ReadChrome(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := &Trace{Lanes: []Lane{
		{Name: "worker", PID: 2, TID: 5, Spans: []Span{
			{Stream: "worker", StreamID: 5, Kernel: "outer", Kind: "c", Start: 10 * time.Microsecond, End: 20 * time.Microsecond},
			{Stream: "worker", StreamID: 5, Kernel: "inner", Task: 3, Start: 12 * time.Microsecond, End: 14 * time.Microsecond},
		}},
		{PID: 2, TID: 6, Spans: []Span{
			{StreamID: 6, Kernel: "early", Start: 1500, End: 2500},
			{StreamID: 6, Kernel: "mark", Start: 3000, End: 3000, Instant: true},
		}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}

	// gzip-compressed.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(strings.TrimSuffix(doc, ",\n") + "]"))
	zw.Close()
	if got2, err := ReadChrome(&z); err != nil || !reflect.DeepEqual(got2, want) {
		t.Fatalf("gzip: %v %+v", err, got2)
	}
}

func TestExactMicros(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"1", 1000}, {"1.5", 1500}, {"-2.25", -2250}, {"0.0004", 0}, {"0.0005", 1}, {"12.3456", 12346}, {"2305843009213693.952", 1 << 61}} {
		got, ok := exactMicros(c.in)
		if !ok || got != c.want {
			t.Errorf("exactMicros(%s) = %d, %v; want %d", c.in, got, ok, c.want)
		}
	}
	for _, in := range []string{"1e3", "", "-", "1.2.3", "99999999999999999"} {
		if _, ok := exactMicros(in); ok {
			t.Errorf("exactMicros(%s) ok", in)
		}
	}
}

func FuzzReadChrome(f *testing.F) {
	r := NewRecorder("dev", 0)
	record(r, 3, 4)
	var buf bytes.Buffer
	r.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(`[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":2}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":-1,"ts":-1e3,"dur":0.0005}],"otherData":{"a":[1,2]}}`))
	f.Add([]byte(`{"traceEvents":[{"ph":"M","name":"thread_sort_index","pid":1,"tid":2,"args":{"sort_index":-4}},{"ph":"i","name":"\u0000<","ts":1e15}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadChrome(bytes.NewReader(data))
		if err != nil {
			if tr != nil {
				t.Fatal("trace and error")
			}
			return
		}
		// What was read writes out as a valid file that reads back equal,
		// and renders as well-formed SVG.
		var out bytes.Buffer
		if err := WriteChrome(&out, tr); err != nil {
			t.Fatal(err)
		}
		tr2, err := ReadChrome(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("rewritten trace invalid: %v\n%s", err, out.String())
		}
		if !reflect.DeepEqual(tr, tr2) {
			t.Fatalf("rewrite changed the trace:\n%+v\n%+v", tr, tr2)
		}
		var svg bytes.Buffer
		if err := RenderSVG(&svg, tr, SVGOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := wellFormed(svg.Bytes()); err != nil {
			t.Fatalf("%v\n%s", err, svg.String())
		}
	})
}

// TestReadBadGzip: a file that starts as gzip does but is not valid gzip
// gets an error that says so once ("gzip: gzip: invalid header" before).
func TestReadBadGzip(t *testing.T) {
	var good bytes.Buffer
	zw := gzip.NewWriter(&good)
	zw.Write([]byte(`{"traceEvents":[]}`))
	zw.Close()
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"bad header", []byte{0x1f, 0x8b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "invalid header"},
		{"truncated", good.Bytes()[:good.Len()-6], "unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadChrome(bytes.NewReader(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Count(err.Error(), "gzip") != 1 {
				t.Fatalf("got %v, want an error naming gzip once and saying %q", err, c.want)
			}
		})
	}
}
