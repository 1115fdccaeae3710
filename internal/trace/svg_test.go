package trace

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

// wellFormed parses an SVG document to its end.
func wellFormed(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	root := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			if !root {
				return errors.New("no root element")
			}
			return nil
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok && !root {
			root = true
			if se.Name.Local != "svg" || se.Name.Space != "http://www.w3.org/2000/svg" {
				return errors.New("root is not an SVG element")
			}
		}
	}
}

// svgLane is what the tests read back from one lane group.
type svgLane struct {
	stream string
	spans  []string // the spans' <title> texts
	inst   int
}

// readSVG collects the lanes of a rendered trace.
func readSVG(t *testing.T, doc []byte) []svgLane {
	t.Helper()
	if err := wellFormed(doc); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, doc)
	}
	d := xml.NewDecoder(bytes.NewReader(doc))
	var lanes []svgLane
	var stack []xml.StartElement
	attr := func(se xml.StartElement, name string) (string, bool) {
		for _, a := range se.Attr {
			if a.Name.Local == name {
				return a.Value, true
			}
		}
		return "", false
	}
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok)
			class, _ := attr(tok, "class")
			switch {
			case tok.Name.Local == "g" && class == "lane":
				s, ok := attr(tok, "data-stream")
				if !ok {
					t.Fatal("lane without data-stream")
				}
				lanes = append(lanes, svgLane{stream: s})
			case tok.Name.Local == "rect" && class == "span":
				lanes[len(lanes)-1].spans = append(lanes[len(lanes)-1].spans, "")
			case tok.Name.Local == "path" && class == "instant":
				lanes[len(lanes)-1].inst++
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if n := len(stack); n >= 2 && stack[n-1].Name.Local == "title" && stack[n-2].Name.Local == "rect" {
				l := &lanes[len(lanes)-1]
				l.spans[len(l.spans)-1] += string(tok)
			}
		}
	}
	return lanes
}

func TestRenderSVG(t *testing.T) {
	r := NewRecorder(`dev <&>`, 0)
	r.NameStream(4, `s<&>"'4`)
	r.Span(Span{StreamID: 0, Stream: "default", Kernel: `k<&>"`, Kind: "parallel", Task: 2, Group: 1, Start: time.Millisecond, End: 3 * time.Millisecond})
	r.Span(Span{StreamID: 0, Kernel: "tiny", Start: 2 * time.Millisecond, End: 2*time.Millisecond + 1})
	r.Span(Span{StreamID: 4, Kernel: "saxpy", Start: 0, End: 4 * time.Millisecond})
	r.Span(Span{StreamID: 4, Kernel: "wait", Start: 5 * time.Millisecond, Instant: true})
	r.Span(Span{StreamID: 9, Kernel: "z", Start: 6 * time.Millisecond, End: 7 * time.Millisecond})
	var buf bytes.Buffer
	if err := RenderSVG(&buf, r.Trace(), SVGOptions{}); err != nil {
		t.Fatal(err)
	}
	lanes := readSVG(t, buf.Bytes())
	if len(lanes) != 3 {
		t.Fatalf("%d lanes, want 3", len(lanes))
	}
	for i, want := range []struct {
		stream string
		spans  int
		inst   int
	}{{"default", 2, 0}, {`s<&>"'4`, 1, 1}, {"stream 9", 1, 0}} {
		if l := lanes[i]; l.stream != want.stream || len(l.spans) != want.spans || l.inst != want.inst {
			t.Errorf("lane %d: %q with %d spans and %d instants, want %+v", i, l.stream, len(l.spans), l.inst, want)
		}
	}
	tip := lanes[0].spans[0]
	for _, want := range []string{`k<&>"`, "task 2 · group 1 · parallel", "start 1 ms", "duration 2 ms"} {
		if !strings.Contains(tip, want) {
			t.Errorf("tooltip %q lacks %q", tip, want)
		}
	}
	s := buf.String()
	for _, want := range []string{`width="1200"`, `>0</text>`, `>1 ms</text>`, `>7 ms</text>`, `qd trace — dev &lt;&amp;&gt;`} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %s", want)
		}
	}

	buf.Reset()
	if err := RenderSVG(&buf, r.Trace(), SVGOptions{Width: 640, Title: "x"}); err != nil || !strings.Contains(buf.String(), `width="640"`) {
		t.Fatalf("width 640: %v", err)
	}
	if err := RenderSVG(io.Discard, r.Trace(), SVGOptions{Width: 10}); err == nil {
		t.Fatal("width 10 accepted")
	}
	if err := RenderSVG(io.Discard, nil, SVGOptions{}); err == nil {
		t.Fatal("nil trace accepted")
	}
}

func TestRenderSVGEdges(t *testing.T) {
	for name, tr := range map[string]*Trace{
		"empty":     {},
		"no spans":  {Lanes: []Lane{{Name: "a", PID: 1, TID: 1}}},
		"instant":   {Lanes: []Lane{{PID: 1, TID: 1, Spans: []Span{{Start: 5, End: 5, Instant: true}}}}},
		"two pids":  {Lanes: []Lane{{PID: 1, TID: 1, Spans: []Span{{Start: 0, End: 5}}}, {PID: 2, TID: 1, Spans: []Span{{Start: -1 << 61, End: 1 << 62}}}}},
		"overflow":  {Lanes: []Lane{{Spans: []Span{{Start: math.MinInt64, End: math.MaxInt64}, {Start: math.MaxInt64, Instant: true}}}}},
		"bad chars": {Process: "\x00\x1b\xff", Lanes: []Lane{{Name: "\x01]]>", Spans: []Span{{Kernel: "\ufffe\x00", End: 1}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := RenderSVG(&buf, tr, SVGOptions{Width: MinSVGWidth}); err != nil {
				t.Fatal(err)
			}
			if got := readSVG(t, buf.Bytes()); len(got) != len(tr.Lanes) {
				t.Fatalf("%d lanes, want %d", len(got), len(tr.Lanes))
			}
		})
	}
}

func TestAxisUnits(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		unit string
	}{{500, "ns"}, {50 * time.Microsecond, "µs"}, {3 * time.Millisecond, "ms"}, {90 * time.Second, "s"}} {
		if u, _ := unitFor(c.d); u != c.unit {
			t.Errorf("unitFor(%v) = %s, want %s", c.d, u, c.unit)
		}
	}
	for raw, want := range map[float64]float64{0.3: 1, 1: 1, 1.5: 2, 3: 5, 7: 10, 11: 20, 450: 500, 1e6: 1e6} {
		if got := niceStep(raw); got != want {
			t.Errorf("niceStep(%g) = %g, want %g", raw, got, want)
		}
	}
	if got := formatDur(12345 * time.Nanosecond); got != "12.35 µs" {
		t.Errorf("formatDur = %q", got)
	}
}
