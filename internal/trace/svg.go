package trace

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// SVGOptions tunes RenderSVG.
type SVGOptions struct {
	// Width is the image width in pixels: 0 means DefaultSVGWidth; it must
	// lie in [MinSVGWidth, MaxSVGWidth].
	Width int
	// Title heads the image; "" means "qd trace" and the process name.
	Title string
}

// Bounds of SVGOptions.Width.
const (
	DefaultSVGWidth = 1200
	MinSVGWidth     = 300
	MaxSVGWidth     = 100000
)

// Layout, in pixels.
const (
	svgMargin  = 12
	svgTitleH  = 26
	svgAxisH   = 34
	svgLaneH   = 24
	svgLaneGap = 4
	svgLegendW = 190
	svgLegendH = 18
	svgCharW   = 7 // rough width of a character at the label font size
	maxLegend  = 24
)

// palette holds distinct mid-tone colours that dark text reads on; a
// kernel's colour is its name's hash modulo the palette, so a kernel keeps
// its colour across traces.
var palette = [...]string{
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d4a6c8",
}

func colour(kernel string) string {
	h := fnv.New32a()
	h.Write([]byte(kernel))
	return palette[h.Sum32()%uint32(len(palette))]
}

// RenderSVG draws t as an SVG timeline: a time axis on top (ticks at 1, 2
// or 5 × a power of ten, in the unit that suits the trace's length, zero at
// the first span), then one lane per Lane of t, each a
// <g class="lane" data-stream="NAME" data-pid="P" data-tid="T"> holding its
// label and one <rect class="span"> per task (coloured by kernel, with a
// <title> tooltip giving kernel, task, group, kind, start and duration)
// and one <path class="instant"> per instant; then a legend of kernel
// colours. Every name is escaped, so any trace gives well-formed XML.
func RenderSVG(w io.Writer, t *Trace, opts SVGOptions) error {
	if t == nil {
		return errors.New("trace: RenderSVG of a nil Trace")
	}
	width := opts.Width
	if width == 0 {
		width = DefaultSVGWidth
	}
	if width < MinSVGWidth || width > MaxSVGWidth {
		return fmt.Errorf("trace: SVG width %d is outside [%d, %d]", width, MinSVGWidth, MaxSVGWidth)
	}
	title := opts.Title
	if title == "" {
		title = "qd trace"
		if t.Process != "" {
			title += " — " + t.Process
		}
	}

	// Time range: from the first start to the last end.
	t0, t1 := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	kernels := map[string]bool{}
	nspans := 0
	multiPID := false
	for _, l := range t.Lanes {
		multiPID = multiPID || l.PID != t.Lanes[0].PID
		for _, s := range l.Spans {
			t0, t1 = min(t0, s.Start), max(t1, s.End, s.Start)
			kernels[s.Kernel] = true
			nspans++
		}
	}
	if nspans == 0 {
		t0, t1 = 0, time.Microsecond
	}
	// In float64: the distance between two times may overflow a Duration.
	length := float64(t1) - float64(t0)
	if length <= 0 {
		length = float64(time.Microsecond)
	}

	labels := make([]string, len(t.Lanes))
	labelW := 72
	for i, l := range t.Lanes {
		labels[i] = laneLabel(l, multiPID)
		labelW = max(labelW, min(utf8.RuneCountInString(labels[i])*svgCharW+16, 240))
	}
	plotX := float64(svgMargin + labelW)
	plotW := float64(width-svgMargin) - plotX
	scale := plotW / length // pixels per nanosecond
	xOf := func(d time.Duration) float64 { return plotX + (float64(d)-float64(t0))*scale }

	lanesY := svgMargin + svgTitleH + svgAxisH
	lanesH := len(t.Lanes) * (svgLaneH + svgLaneGap)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range kernels {
			if !yield(k) {
				return
			}
		}
	})
	legendCols := max(1, (width-2*svgMargin)/svgLegendW)
	legendN := min(len(names), maxLegend)
	legendRows := (legendN + legendCols - 1) / legendCols
	if len(names) > maxLegend {
		legendRows++
	}
	legendY := lanesY + lanesH + 12
	height := legendY + legendRows*svgLegendH + svgMargin

	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	p(`<style>.lane-bg{fill:#f4f4f4}.lane-label{fill:#222}.span{stroke:#0003;stroke-width:0.5}.span-label{fill:#111;font-size:10px;pointer-events:none}.grid{stroke:#ddd}.tick{fill:#444;font-size:11px}.instant{fill:#222}</style>` + "\n")
	p(`<rect width="100%%" height="100%%" fill="#fff"/>` + "\n")
	p(`<text class="title" x="%d" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", svgMargin, svgMargin+16, esc(title))
	unitName, unitNS := unitFor(time.Duration(min(length, math.MaxInt64)))
	p(`<text class="subtitle" x="%d" y="%d" fill="#555">%d lanes, %d spans; 0 = %s after the trace's epoch, times in %s</text>`+"\n",
		svgMargin, svgMargin+svgTitleH+4, len(t.Lanes), nspans, esc(formatDur(t0)), unitName)

	// Axis: ticks and grid lines.
	step := niceStep(length / max(2, plotW/110))
	decimals := 0
	if step < unitNS {
		decimals = int(math.Ceil(math.Log10(unitNS/step) - 1e-9))
	}
	axisY := lanesY - 6
	p(`<g class="axis">` + "\n")
	p(`<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#444"/>`+"\n", plotX, axisY, plotX+plotW, axisY)
	for k := 0; ; k++ {
		off := float64(k) * step
		if off > length*(1+1e-9) {
			break
		}
		x := plotX + off*scale
		label := strconv.FormatFloat(off/unitNS, 'f', decimals, 64)
		if k > 0 {
			label += " " + unitName
		}
		anchor := "middle"
		if k == 0 {
			anchor = "start"
		}
		p(`<line class="grid" x1="%.2f" y1="%d" x2="%.2f" y2="%d"/>`+"\n", x, axisY-4, x, lanesY+lanesH)
		p(`<text class="tick" x="%.2f" y="%d" text-anchor="%s">%s</text>`+"\n", x, axisY-8, anchor, label)
	}
	p("</g>\n")

	for i, l := range t.Lanes {
		y := lanesY + i*(svgLaneH+svgLaneGap)
		p(`<g class="lane" data-stream="%s" data-pid="%d" data-tid="%d">`+"\n", esc(l.Name), l.PID, l.TID)
		p(`<rect class="lane-bg" x="%d" y="%d" width="%d" height="%d"/>`+"\n", svgMargin, y, width-2*svgMargin, svgLaneH)
		p(`<text class="lane-label" x="%d" y="%d">%s</text>`+"\n", svgMargin+4, y+svgLaneH/2+4,
			esc(truncate(labels[i], (labelW-16)/svgCharW)))
		for _, s := range l.Spans {
			x := xOf(s.Start)
			tip := tooltip(s, t0)
			if s.Instant {
				p(`<path class="instant" d="M%.2f %dl4 7h-8z"><title>%s</title></path>`+"\n", x, y+1, esc(tip))
				continue
			}
			sw := max((float64(s.End)-float64(s.Start))*scale, 1) // keep short tasks visible
			p(`<rect class="span" x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				x, y+2, sw, svgLaneH-4, colour(s.Kernel), esc(tip))
			if n := int((sw - 6) / 6.5); n >= 4 {
				p(`<text class="span-label" x="%.2f" y="%d">%s</text>`+"\n", x+3, y+svgLaneH/2+4, esc(truncate(s.Kernel, n)))
			}
		}
		p("</g>\n")
	}

	p(`<g class="legend">` + "\n")
	for i, name := range names[:legendN] {
		x := svgMargin + (i%legendCols)*svgLegendW
		y := legendY + (i/legendCols)*svgLegendH
		p(`<rect class="swatch" x="%d" y="%d" width="10" height="10" fill="%s"/>`+"\n", x, y, colour(name))
		p(`<text x="%d" y="%d">%s</text>`+"\n", x+14, y+9, esc(truncate(name, (svgLegendW-20)/svgCharW)))
	}
	if more := len(names) - legendN; more > 0 {
		p(`<text x="%d" y="%d" fill="#555">and %d more kernels</text>`+"\n", svgMargin, legendY+(legendRows-1)*svgLegendH+9, more)
	}
	p("</g>\n</svg>\n")
	return bw.Flush()
}

// laneLabel is what a lane's label says: its name, or its ids when the
// file named none; with several processes, the pid too.
func laneLabel(l Lane, multiPID bool) string {
	name := l.Name
	if name == "" {
		name = "tid " + strconv.FormatInt(l.TID, 10)
	}
	if multiPID {
		name = "pid " + strconv.FormatInt(l.PID, 10) + ": " + name
	}
	return name
}

func tooltip(s Span, t0 time.Duration) string {
	var b strings.Builder
	b.WriteString(s.Kernel)
	if s.Instant {
		b.WriteString(" (instant)")
	}
	fmt.Fprintf(&b, "\ntask %d · group %d", s.Task, s.Group)
	if s.Kind != "" {
		b.WriteString(" · " + s.Kind)
	}
	if s.Launch != 0 {
		fmt.Fprintf(&b, " · launch %d", s.Launch)
	}
	fmt.Fprintf(&b, "\nstart %s", formatDur(s.Start-t0))
	if !s.Instant {
		fmt.Fprintf(&b, " · duration %s", formatDur(s.End-s.Start))
	}
	return b.String()
}

// unitFor picks the axis unit for a trace of the given length, so that
// tick labels stay short numbers.
func unitFor(length time.Duration) (string, float64) {
	switch {
	case length >= time.Second:
		return "s", 1e9
	case length >= time.Millisecond:
		return "ms", 1e6
	case length >= time.Microsecond:
		return "µs", 1e3
	}
	return "ns", 1
}

// niceStep is the smallest 1, 2 or 5 × 10^k nanoseconds (at least 1) not
// below raw.
func niceStep(raw float64) float64 {
	if raw <= 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// formatDur writes d with four significant digits in the unit that suits
// it: 950 ns, 12.35 µs, 1.5 ms.
func formatDur(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	name, ns := unitFor(d)
	return sign + strconv.FormatFloat(float64(d)/ns, 'g', 4, 64) + " " + name
}

// truncate shortens s to at most n runes, marking the cut with an ellipsis.
func truncate(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// esc escapes s for XML text and attribute values; characters XML cannot
// hold become U+FFFD, so the document stays well-formed.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
