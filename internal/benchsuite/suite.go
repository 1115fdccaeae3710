package benchsuite

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quadrants-go/qd"
	"github.com/quadrants-go/qd/internal/backend"
)

// Row is one figure of the suite.
type Row struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	RefName  string  `json:"ref_name,omitempty"`
	RefValue float64 `json:"ref_value,omitempty"`
	// Ratio is Value against the reference in the sense of the bar (for
	// a speedup, the speedup over its ideal).
	Ratio float64 `json:"ratio,omitempty"`
	// Bar is the condition on Ratio (or on Value when there is no
	// reference), e.g. "≤ 1.15"; empty for figures reported without one.
	Bar string `json:"bar,omitempty"`
	// Status is "pass", "FAIL", "info" (no bar) or "skip".
	Status string `json:"status"`
	// Note says how the figure was measured, or why it was skipped.
	Note string `json:"note,omitempty"`
}

// Options tunes a run.
type Options struct {
	// Quick uses small sizes and few iterations: a smoke run (tests, CPU).
	Quick bool
	// Log, when set, gets a line as each measurement starts.
	Log io.Writer
	// FirstInit, when set, is how long the caller's qd.Init took (the
	// first in its process), reported beside the second Init.
	FirstInit time.Duration
	// Run, when set, selects the measurements whose name it matches
	// (launch host cost, K streams, groups, saxpy, reduction, stencil,
	// n-body, block-level kernels, ports (of CUDA samples and Rodinia),
	// stream pool, events, Ndarray alloc/free, host copies, peer copy,
	// copy/compute pipeline, graphs, compile, Init and Close, CPU
	// constructs, CPU block kernels).
	Run *regexp.Regexp
}

// Statuses.
const (
	Pass = "pass"
	Fail = "FAIL"
	Info = "info"
	Skip = "skip"
)

// syncEvery is the burst length of host-cost loops.
const syncEvery = 256

// suite is one run's state.
type suite struct {
	p     *qd.Program
	opt   Options
	gpu   bool
	raw   backend.Device // the same GPU through the backend, for references
	rows  []Row
	copyB float64 // device-to-device copy bandwidth (bytes/s), once measured
	done  []func() error
}

// cleanup registers f to run when the suite ends, in reverse order.
func (s *suite) cleanup(f func() error) { s.done = append(s.done, f) }

// Run measures every figure on p and returns the rows in a fixed order. An
// error is returned only when the suite cannot run at all; a measurement
// that fails becomes a FAIL row with the error as its note.
func Run(p *qd.Program, opt Options) ([]Row, error) {
	if p == nil {
		return nil, fmt.Errorf("benchsuite: nil Program")
	}
	s := &suite{p: p, opt: opt, gpu: p.Arch() != qd.CPU}
	if s.gpu {
		b, ok := backend.Lookup(p.Arch().String())
		if !ok {
			return nil, fmt.Errorf("benchsuite: the %s backend is not registered", p.Arch())
		}
		raw, err := b.Open(0)
		if err != nil {
			return nil, fmt.Errorf("benchsuite: opening the reference handle on the GPU: %w", err)
		}
		defer raw.Close()
		s.raw = raw
		defer func() {
			for i := len(s.done) - 1; i >= 0; i-- {
				s.done[i]()
			}
		}()
	}
	steps := []struct {
		what string
		f    func() error
	}{
		{"launch host cost", s.launch},
		{"latency-bound kernels on K streams", s.kStreams},
		{"stream-parallel groups", s.groups},
		{"saxpy bandwidth", s.saxpy},
		{"reduction", s.reduction},
		{"stencil", s.stencil},
		{"n-body", s.nbody},
		{"block-level kernels", s.blockRows},
		{"ports of CUDA samples and Rodinia", s.ports},
		{"stream pool", s.pool},
		{"event record+wait", s.events},
		{"Ndarray alloc/free", s.ndarrays},
		{"NewNdarrayOn alloc/free", s.ndarraysOn},
		{"host copies", s.hostCopies},
		{"peer copy", s.peerCopy},
		{"copy/compute pipeline", s.pipeline},
		{"graphs", s.graphs},
		{"compile", s.compile},
		{"Init and Close", s.programs},
		{"CPU machine scaling", s.cpuMachine},
		{"CPU constructs", s.cpuConstructs},
		{"CPU block kernels", s.cpuBlocks},
	}
	for _, st := range steps {
		if opt.Run != nil && !opt.Run.MatchString(st.what) {
			continue
		}
		s.logf("%s ...", st.what)
		if err := st.f(); err != nil {
			s.rows = append(s.rows, Row{Name: st.what, Status: Fail, Note: "error: " + err.Error()})
		}
	}
	return s.rows, nil
}

func (s *suite) logf(format string, args ...any) {
	if s.opt.Log != nil {
		fmt.Fprintf(s.opt.Log, format+"\n", args...)
	}
}

// pick returns quick in Quick mode, else gpu on a GPU and cpu on the CPU.
func (s *suite) pick(quick, cpu, gpu int) int {
	switch {
	case s.opt.Quick:
		return quick
	case s.gpu:
		return gpu
	}
	return cpu
}

func (s *suite) add(r Row) { s.rows = append(s.rows, r) }

func (s *suite) skip(name, why string) { s.add(Row{Name: name, Status: Skip, Note: why}) }

// barLE and barGE make a row's bar and status from its ratio.
func barLE(r *Row, limit float64) {
	r.Bar = "≤ " + trim(limit)
	r.Status = status(r.Ratio <= limit)
}

func barGE(r *Row, limit float64) {
	r.Bar = "≥ " + trim(limit)
	r.Status = status(r.Ratio >= limit)
}

func status(ok bool) string {
	if ok {
		return Pass
	}
	return Fail
}

func trim(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

// best runs f reps times and keeps the smallest result: the least
// disturbed repetition of a host-cost loop.
func best(reps int, f func() (time.Duration, error)) (time.Duration, error) {
	b := time.Duration(math.MaxInt64)
	for range reps {
		d, err := f()
		if err != nil {
			return 0, err
		}
		b = min(b, d)
	}
	return b, nil
}

func ns(d time.Duration) float64 { return float64(d.Nanoseconds()) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// WriteTable prints rows as an aligned table.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tvalue\treference\tratio\tbar\tstatus\tnote")
	for _, r := range rows {
		val, ref, ratio := "-", "-", "-"
		if r.Status != Skip && !(r.Status == Fail && r.Unit == "") {
			val = num(r.Value) + " " + r.Unit
		}
		if r.RefName != "" {
			ref = r.RefName + " " + num(r.RefValue) + " " + r.Unit
		}
		if r.Ratio != 0 {
			ratio = num(r.Ratio)
		}
		bar := r.Bar
		if bar == "" {
			bar = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, val, ref, ratio, bar, r.Status, r.Note)
	}
	return tw.Flush()
}

// num formats a figure with about 3 significant digits.
func num(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// WriteJSON writes rows as a JSON document {"rows":[...]}, with the
// device and a summary.
func WriteJSON(w io.Writer, device string, rows []Row) error {
	failed := 0
	for _, r := range rows {
		if r.Status == Fail {
			failed++
		}
	}
	doc := struct {
		Device string `json:"device"`
		Rows   []Row  `json:"rows"`
		Failed int    `json:"failed"`
	}{device, rows, failed}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// Failed counts the rows whose bar is not met.
func Failed(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Status == Fail {
			n++
		}
	}
	return n
}
