package qd

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/gpu/fakedriver"
)

// TestStress is a bounded stress test of the whole host API (issue 23):
// goroutines launch kernels, capture graphs, replay, update and close
// them, allocate stream-ordered arrays, close arrays and streams, trace,
// record and wait for events and copy, at random, on the CPU backend and on
// a GPU Program over the fake CUDA driver (internal/backend/gpu/fakedriver),
// so that -race sees the runtime's concurrency on both paths.
//
// Each goroutine (a worker) has two worlds. Its private objects (arrays,
// host arrays, streams, events, graphs; stress_private_test.go) are
// checked exactly against a model of their contents, as FuzzAPIModel does:
// the worker orders its streams as a correct program must, so every result
// is determined. The shared objects (stress_shared_test.go) are one
// capture stream S that every worker launches on, copies on, captures and
// replays graphs on, arrays that any worker closes and replaces, and
// streams any worker closes: their outcomes race, so each call may only
// succeed or fail with the sentinels its race allows, and what the arrays
// hold must keep an invariant that every whole operation keeps (all
// elements equal and even: kernels add 2 in two tasks, copies move whole
// arrays of such values), which a launch split across a capture's
// boundary, a read not ordered after a write or a missing zero fill breaks.
// The shared world obeys a lock discipline of its own (stressShared.sMu),
// so that the test itself has no data race whatever the runtime does.
//
// Every error of the public API must match one of qd's sentinels or be an
// *ArgumentError, each branch of a joined error included. No panic, no
// hang (a watchdog dumps every goroutine), and no leak: after Program.Close
// the fake driver holds nothing (Injector.Live) and saw no misuse (which
// is how it reports access to freed memory), and on the CPU the goroutines
// go back to where they were.
//
// Rounds: each round is a fresh Program, cfg.workers workers of cfg.ops
// operations, then the end checks; rounds run until the round's time is up.
// A round sometimes closes the Program while its workers still run.
//
// Settings (environment):
//
//	QD_STRESS=1          the full run: a minute in all (both backends)
//	QD_STRESS=20s        that long in all
//	QD_STRESS_SEED=N     the seed of the first round (round r uses N+r); a
//	                     failure prints the seed of its round
//	QD_STRESS_ROUNDS=N   N rounds per backend, however long they take
//	QD_STRESS_OPS=N      operations per worker per round (default 150)
//	QD_STRESS_WORKERS=N  workers per round (default 4)
//	QD_STRESS_DEFECTS=…  "all" (the default), "none", or a list like "1,3":
//	                     the races of fixed defects that run (stressDefects)
//	QD_STRESS_SKIP=…     operations to leave out: a comma-separated list of
//	                     parts of their names in the tables of stressOp ("Trace,Capture")
//	QD_STRESS_ONLY=…     the operations to keep, named the same way
//	QD_STRESS_EARLY=1    every round closes the Program while its workers
//	                     run (else one round in five does)
//
// By default the test takes about 2 s in all, and 20 s under the race
// detector (the CI's race run is where a stress test finds the most), so
// that go test ./... stays fast. stress_repro_test.go holds the minimal
// reproductions of what it found.
func TestStress(t *testing.T) {
	cfg := stressConfig(t)
	t.Logf("seed %d (QD_STRESS_SEED=%d reproduces the schedule, as far as goroutine scheduling allows), %v in all, %d workers × %d operations a round, defects on: %v",
		cfg.seed, cfg.seed, cfg.total, cfg.workers, cfg.ops, cfg.defectList())
	for _, b := range []string{"cpu", "fake"} {
		t.Run(b, func(t *testing.T) {
			deadline := time.Now().Add(cfg.total / 2)
			rounds := 0
			for r := 0; ; r++ {
				if cfg.rounds > 0 && r >= cfg.rounds || cfg.rounds == 0 && r > 0 && time.Now().After(deadline) {
					break
				}
				if !runStressRound(t, cfg, b, cfg.seed+uint64(r)) {
					break // the first failing round says enough
				}
				rounds++
			}
			t.Logf("%d rounds", rounds)
		})
	}
}

// stressDefects says which races (stress_shared_test.go: race) and
// operations (stressOp.defect) that exposed a defect run. Each failed the
// test within seconds on the code of bc1e48b; all are fixed and on. Turn
// one off (QD_STRESS_DEFECTS=none, or a list of those to keep on) to tell
// a new failure from one of these. Keys below 100 are the defects issue 23
// lists; from 101 on, those the stress test found besides.
// stress_repro_test.go has a minimal reproduction of each.
var stressDefects = map[int]bool{
	1: true, // a launch or copy racing Capture on its stream: captured by the backend, not held by the graph
	2: true, // a CPU launch split across a capture's boundary
	3: true, // Ndarray.Close racing Capture on the array's home stream
	4: true, // host copies racing Close of the same array
	5: true, // StartTrace replacing a trace just before Program.Close leaks its timing events
	8: true, // raw backend errors from Synchronize, Query, StopTrace, LaunchOn during capture churn

	101: true, // StopTrace without a trace returns an error matching no sentinel
	102: true, // Program.Close racing a capture returns the backend's raw error
	103: true, // a traced launch on the fake split across a capture's boundary: raw trace error
	104: true, // an event recorded on a stream racing a capture on it: raw errors, driver misuse
	105: true, // Program.Synchronize or StopTrace racing Stream.Close: raw "stream closed"
	106: true, // Event.Record, WaitStream, Synchronize racing Stream.Close: calls on a destroyed stream
	107: true, // Event.SynchronizeContext racing Program.Close deadlocks
	108: true, // work another goroutine enqueues on a stream runs between the tasks of a launch
}

type stressSettings struct {
	total   time.Duration // both backends together
	seed    uint64
	rounds  int // rounds per backend; 0: until the time is up
	ops     int // operations per worker per round
	workers int
	defects map[int]bool
	skip    []string // parts of names of operations left out
	only    []string // parts of names of the operations kept
}

func (c stressSettings) defectList() []int {
	var out []int
	for d, on := range c.defects {
		if on {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

func stressConfig(t *testing.T) stressSettings {
	c := stressSettings{total: 2 * time.Second, ops: 150, workers: 4, seed: uint64(time.Now().UnixNano()), defects: map[int]bool{}}
	if raceEnabled {
		c.total = 20 * time.Second
	}
	switch v := os.Getenv("QD_STRESS"); v {
	case "":
	case "1":
		c.total = time.Minute
	default:
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("QD_STRESS=%q: want 1 or a duration: %v", v, err)
		}
		c.total = d
	}
	num := func(name string, dst *int) {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				t.Fatalf("%s=%q: want a count", name, v)
			}
			*dst = n
		}
	}
	num("QD_STRESS_ROUNDS", &c.rounds)
	num("QD_STRESS_OPS", &c.ops)
	num("QD_STRESS_WORKERS", &c.workers)
	c.workers = max(c.workers, 1)
	if v := os.Getenv("QD_STRESS_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("QD_STRESS_SEED=%q: %v", v, err)
		}
		c.seed = s
	}
	if v := os.Getenv("QD_STRESS_SKIP"); v != "" {
		c.skip = strings.Split(v, ",")
	}
	if v := os.Getenv("QD_STRESS_ONLY"); v != "" {
		c.only = strings.Split(v, ",")
	}
	for d, on := range stressDefects {
		c.defects[d] = on
	}
	switch v := os.Getenv("QD_STRESS_DEFECTS"); v {
	case "", "all":
	case "none":
		clear(c.defects)
	default:
		clear(c.defects)
		for f := range strings.SplitSeq(v, ",") {
			d, err := strconv.Atoi(strings.TrimSpace(f))
			if _, known := stressDefects[d]; err != nil || !known {
				t.Fatalf("QD_STRESS_DEFECTS=%q: %q is not a key of stressDefects", v, f)
			}
			c.defects[d] = true
		}
	}
	return c
}

// stressRound is one Program and what its workers share.
type stressRound struct {
	t       *testing.T
	cfg     stressSettings
	backend string
	seed    uint64
	p       *Program
	fake    *fakedriver.Driver // nil on the CPU
	runs    bool               // kernels run (the fake runs none)
	k       stressKernels

	stop       atomic.Bool   // a worker failed: the others stop early
	closeEarly bool          // the round closes the Program while workers run
	closing    atomic.Bool   // Program.Close has begun while workers run
	closeAt    chan struct{} // closed by worker 0 when an early Close is due
	workers    []*stressWorker
	wg         sync.WaitGroup

	failMu   sync.Mutex
	failures []string

	shared stressShared
}

// failf records a failure of the round.
func (r *stressRound) failf(format string, args ...any) {
	r.failMu.Lock()
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
	r.failMu.Unlock()
	r.stop.Store(true)
}

// stressKernels are the kernels every worker shares.
type stressKernels struct{ fill, add, two, inc2 *Kernel }

const stressSrc = `package k

import "github.com/quadrants-go/qd"

//qd:kernel
func fill(x []int32, v int32) {
	for i := range x {
		x[i] = v
	}
}

//qd:kernel
func add(x, y []int32) {
	for i := range y {
		y[i] += x[i]
	}
}

//qd:kernel
func two(a, b []int32, v int32) {
	qd.StreamParallel(func() {
		for i := range a {
			a[i] = v
		}
	})
	qd.StreamParallel(func() {
		for i := range b {
			b[i] = 2 * v
		}
	})
}

// inc2 adds 2 in two tasks, so that a launch split in two shows as an odd
// value.
//
//qd:kernel
func inc2(x []int32) {
	for i := range x {
		x[i] += 1
	}
	for i := range x {
		x[i] += 1
	}
}
`

// stressBase is what the fake driver held before a round.
type stressBase struct {
	live     fakedriver.Live
	misuses  int
	routines int // goroutines
}

// stressOpen opens the round's Program on backend, and says what there was
// before.
func stressOpen(t *testing.T, backend string, opts ...InitOption) (*Program, *fakedriver.Driver, stressBase) {
	t.Helper()
	return stressOpenOn(t, backend, nil, opts...)
}

// stressOpenOn is stressOpen with the device wrapped by wrap, if not nil.
func stressOpenOn(t *testing.T, name string, wrap func(backend.Device) backend.Device, opts ...InitOption) (*Program, *fakedriver.Driver, stressBase) {
	t.Helper()
	runtime.GC() // leaked objects of earlier tests are cleaned up before the baseline
	base := stressBase{routines: runtime.NumGoroutine()}
	cfg := initConfig{arch: CPU}
	var dev backend.Device
	var fake *fakedriver.Driver
	if name == "cpu" {
		b, _ := backend.Lookup("cpu")
		dev = must(b.Open(0))(t)
	} else {
		fakeOnce.Do(func() { fakeDrv, fakeErr = fakedriver.New() })
		if fakeErr != nil {
			t.Skipf("no fake driver on this platform: %v", fakeErr)
		}
		fake = fakeDrv
		fake.Reset()
		base.live, base.misuses = fake.Live(), len(fake.Misuses())
		d, err := gpu.Open(fake, 0)
		if err != nil {
			t.Fatal(err)
		}
		d.Props().ContextChecked = true // CUDA's paths, as openFake takes
		dev, cfg.arch = d, CUDA
	}
	for _, o := range opts {
		o(&cfg)
	}
	if wrap != nil {
		dev = wrap(dev)
	}
	p := must(newProgram(dev, cfg.arch, cfg))(t)
	t.Cleanup(func() { p.Close() }) // a test that stops early; Close is idempotent
	return p, fake, base
}

// runStressRound runs one round and reports whether it passed.
func runStressRound(t *testing.T, cfg stressSettings, backend string, seed uint64) bool {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	var opts []InitOption
	traced := rng.IntN(4) == 0
	if traced {
		opts = append(opts, WithTrace())
	}
	p, fake, base := stressOpen(t, backend, opts...)
	r := &stressRound{t: t, cfg: cfg, backend: backend, seed: seed, p: p, fake: fake, runs: fake == nil, closeAt: make(chan struct{})}
	m := must(Compile(p, stressSrc))(t)
	for _, kk := range []struct {
		dst  **Kernel
		name string
	}{{&r.k.fill, "fill"}, {&r.k.add, "add"}, {&r.k.two, "two"}, {&r.k.inc2, "inc2"}} {
		*kk.dst = must(m.Kernel(kk.name))(t)
	}
	if n := len(r.k.inc2.c.plan.Tasks); n != 2 {
		t.Fatalf("inc2 has %d tasks; the split check needs 2", n)
	}
	r.setupShared(traced)
	closeEarly := rng.IntN(5) == 0 || os.Getenv("QD_STRESS_EARLY") == "1"
	r.closeEarly = closeEarly
	closeAfter := -1
	if closeEarly {
		closeAfter = rng.IntN(cfg.ops + 1)
	}
	stopWatch := r.watchdog()
	defer stopWatch()
	for i := range cfg.workers {
		w := newStressWorker(r, i, seed)
		r.workers = append(r.workers, w)
		r.wg.Add(1)
		go w.run(cfg.ops, closeAfter)
	}
	allDone := make(chan struct{})
	go func() { r.wg.Wait(); close(allDone) }()
	select {
	case <-allDone:
	case <-r.closeAt:
		// Program.Close while the workers run: every call after it fails
		// with ErrClosed, and Close ends the captures in progress.
		r.closing.Store(true)
		var err error
		r.closeRacing(func() { err = p.Close() })
		if err != nil {
			r.checkErr("Program.Close while workers run", err)
		}
		<-allDone
	}
	failed := len(r.failures) > 0
	if !closeEarly && !failed {
		r.closeShared(rng)
		r.checkRegistries()
	}
	if err := p.Close(); err != nil {
		r.failf("Program.Close: %v", err)
	}
	if _, err := p.NewStream(); !errors.Is(err, ErrClosed) {
		r.failf("NewStream after Program.Close: %v, want ErrClosed", err)
	}
	r.checkLeaks(base)
	if len(r.failures) == 0 {
		return true
	}
	for _, f := range r.failures {
		t.Errorf("round seed %d (%s; early Close: %v, traced: %v): %s", seed, backend, closeEarly, traced, f)
	}
	race := ""
	if raceEnabled {
		race = " -race"
	}
	t.Logf("reproduce with QD_STRESS_SEED=%d QD_STRESS_ROUNDS=1 QD_STRESS_DEFECTS=%q go test%s -run 'TestStress/%s' .", seed, os.Getenv("QD_STRESS_DEFECTS"), race, backend)
	return false
}

// closeRacing runs an early Program.Close, kept out of captures unless
// defect 102 is on, and out of StopTrace unless defect 5 is.
func (r *stressRound) closeRacing(close func()) {
	if !r.enabled(5) {
		// A StopTrace that Close overtakes releases its trace after the
		// device is closed (defect 5).
		r.shared.trMu.Lock()
		defer r.shared.trMu.Unlock()
	}
	if !r.enabled(raceCloseCapture...) {
		r.shared.capMu.Lock()
		defer r.shared.capMu.Unlock()
		r.shared.pcapMu.Lock()
		defer r.shared.pcapMu.Unlock()
	}
	close()
}

// checkErr fails the round for an error matching no sentinel.
func (r *stressRound) checkErr(what string, err error) {
	if why := stressBadError(err); why != "" {
		r.failf("%s: %s: %v", what, why, err)
	}
}

// watchdog fails the run, with every goroutine's stack and what each
// worker was doing, if the round does not end in time.
func (r *stressRound) watchdog() (stop func()) {
	limit := 90 * time.Second
	if raceEnabled {
		limit = 4 * time.Minute
	}
	tm := time.AfterFunc(limit, func() {
		var b strings.Builder
		fmt.Fprintf(&b, "stress watchdog: round seed %d (%s) did not end in %v: a hang\n", r.seed, r.backend, limit)
		for _, w := range r.workers {
			op := "(none)"
			if s := w.cur.Load(); s != nil {
				op = *s
			}
			fmt.Fprintf(&b, "worker %d: in %s\n", w.id, op)
		}
		buf := make([]byte, 16<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(os.Stderr, "%s\n%s\n", b.String(), buf)
		debug.SetTraceback("all")
		panic(b.String())
	})
	return func() { tm.Stop() }
}

// checkRegistries checks, once every worker and the shared objects are
// closed and before Program.Close, that the Program holds nothing but its
// own: no array, host array, event, graph, capture, user stream, and every
// pooled stream and event back in its pool.
func (r *stressRound) checkRegistries() {
	p := r.p
	p.mu.Lock()
	defer p.mu.Unlock()
	users := 0
	for s := range p.streams {
		if s.kind == streamUser || s.kind == streamWrapped {
			users++
		}
	}
	if n := [...]int{len(p.arrays), len(p.hosts), len(p.events), len(p.graphs), len(p.captures), users}; n != [6]int{} {
		var arrays []string
		for a := range p.arrays {
			home := "none"
			if a.st.home != nil {
				home = a.st.home.describe()
			}
			arrays = append(arrays, fmt.Sprintf("shape %v, closed %v, home %s, allocated in a capture %v", a.shape[:a.dims], a.isClosed(), home, a.st.cap != nil))
		}
		r.failf("everything closed, but the Program holds %d arrays %q, %d host arrays, %d events, %d graphs, %d captures, %d user streams", n[0], arrays, n[1], n[2], n[3], n[4], n[5])
	}
	if n := p.ncap.Load(); n != 0 {
		r.failf("no capture in progress, but ncap = %d", n)
	}
	if n, m := p.pool.Out(), p.evpool.Out(); n != 0 || m != 0 {
		r.failf("%d pooled streams and %d pooled events still out", n, m)
	}
}

// checkLeaks checks what Program.Close left: nothing in the fake driver
// and no misuse of it; on the CPU, no goroutine more than before the round.
// Releases that finish on goroutines of their own get a moment.
func (r *stressRound) checkLeaks(base stressBase) {
	deadline := time.Now().Add(2 * time.Second)
	if r.fake != nil {
		live := r.fake.Live()
		for live != base.live && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			live = r.fake.Live()
		}
		if live != base.live {
			r.failf("after Program.Close the fake driver holds %v (before the round: %v)", live, base.live)
		}
		for _, m := range r.fake.Misuses()[base.misuses:] {
			r.failf("misuse of the fake driver (access to freed memory, a call a capture forbids, ...): %s", m)
		}
		return
	}
	n := runtime.NumGoroutine()
	for n > base.routines && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > base.routines {
		buf := make([]byte, 1<<20)
		r.failf("%d goroutines after Program.Close, %d before the round:\n%s", n, base.routines, buf[:runtime.Stack(buf, true)])
	}
}

// stressOp is one kind of call a worker makes: its name, how often it is
// chosen, and the known defect it exposes (0: none), which keeps it off
// until stressDefects turns it on.
type stressOp struct {
	name   string
	weight int
	defect int
	run    func(w *stressWorker)
}

// stressPrivateOps and stressSharedOps are the tables of operations: the
// private world's (stress_private_test.go, stress_graphs_test.go) and the
// shared world's (stress_shared_test.go).
var stressPrivateOps = []stressOp{
	{"NewNdarray", 3, 0, (*stressWorker).opNewArray},
	{"NewNdarrayOn", 2, 0, (*stressWorker).opNewArrayOn},
	{"Ndarray.Close", 3, 0, (*stressWorker).opCloseArray},
	{"launch fill", 6, 0, (*stressWorker).opFill},
	{"launch add", 3, 0, (*stressWorker).opAdd},
	{"launch two (stream-parallel)", 2, 0, (*stressWorker).opTwo},
	{"launch inc2", 2, 0, (*stressWorker).opInc2},
	{"launch with a Go slice", 1, 0, (*stressWorker).opSlice},
	{"FillOn", 3, 0, (*stressWorker).opFillOn},
	{"CopyFromOn", 3, 0, (*stressWorker).opCopyFromOn},
	{"CopyFromHost", 2, 0, (*stressWorker).opCopyFromHost},
	{"ToSlice / CopyToHost", 4, 0, (*stressWorker).opRead},
	{"Rows view", 1, 0, (*stressWorker).opRows},
	{"NewHostArray", 1, 0, (*stressWorker).opNewHost},
	{"CopyFromHostOn", 2, 0, (*stressWorker).opHostIn},
	{"CopyToHostOn", 2, 0, (*stressWorker).opHostOut},
	{"HostArray.Data", 2, 0, (*stressWorker).opHostData},
	{"HostArray.Close", 1, 0, (*stressWorker).opCloseHost},
	{"NewStream", 1, 0, (*stressWorker).opNewStream},
	{"Stream.Close", 1, 0, (*stressWorker).opCloseStream},
	{"Stream.Synchronize", 2, 0, (*stressWorker).opSyncStream},
	{"NewEvent", 1, 0, (*stressWorker).opNewEvent},
	{"Event record / wait", 2, 0, (*stressWorker).opEvent},
	{"Event.Close", 1, 0, (*stressWorker).opCloseEvent},
	{"Capture", 4, 0, (*stressWorker).opCapture},
	{"Capture refused", 1, 0, (*stressWorker).opCaptureRefused},
	{"Graph.LaunchOn", 5, 0, (*stressWorker).opReplay},
	{"Graph.Update", 2, 0, (*stressWorker).opUpdate},
	{"Graph.Close", 1, 0, (*stressWorker).opCloseGraph},
}

var stressSharedOps = []stressOp{
	{"shared: inc2 on S", 4, 0, (*stressWorker).opSharedLaunch},
	{"shared: CopyFromOn on S", 2, 0, (*stressWorker).opSharedCopy},
	{"shared: CopyFromHostOn on S", 1, 0, (*stressWorker).opSharedHostIn},
	{"shared: CopyToHostOn on S", 1, 0, (*stressWorker).opSharedHostOut},
	{"shared: HostArray.Data", 1, 0, (*stressWorker).opSharedHostRead},
	{"shared: ToSlice / CopyToHost", 3, 0, (*stressWorker).opSharedRead},
	{"shared: CopyFromHost", 1, 0, (*stressWorker).opSharedWrite},
	{"shared: Ndarray.Close and replace", 2, 0, (*stressWorker).opSharedClose},
	{"shared: NewNdarrayOn S, Close", 2, 0, (*stressWorker).opSharedAlloc},
	{"shared: Capture on S", 3, 0, (*stressWorker).opSharedCapture},
	{"shared: Graph.LaunchOn S", 3, 0, (*stressWorker).opSharedReplay},
	{"shared: Graph.Update", 1, 0, (*stressWorker).opSharedUpdate},
	{"shared: Graph.Close", 1, 0, (*stressWorker).opSharedCloseGraph},
	{"shared: S.Synchronize / Query", 2, 0, (*stressWorker).opSharedSync},
	{"shared: event on S", 1, 0, (*stressWorker).opSharedEvent},
	{"shared: close a victim stream", 1, 0, (*stressWorker).opCloseVictim},
	{"Program.Synchronize", 1, 0, (*stressWorker).opProgramSync},
	{"StartTrace / StopTrace", 1, 0, (*stressWorker).opTrace},
	{"StopTrace racing StartTrace", 1, 101, (*stressWorker).opTraceChurn},
}

// stressWorker is one goroutine of a round: its random source, its
// private objects and their model, and the calls it made.
type stressWorker struct {
	r         *stressRound
	id        int
	rng       *rand.Rand
	log       []string               // the last calls, for failure messages
	cur       atomic.Pointer[string] // the call in progress, for the watchdog
	stopped   bool                   // the Program was closed under it
	inCapture bool                   // it runs a capture on S, holding capMu
	ops       []stressOp             // the operations enabled
	total     int                    // their weights
	nPriv     int                    // ops[:nPriv] are the private world's

	private
}

func newStressWorker(r *stressRound, id int, seed uint64) *stressWorker {
	w := &stressWorker{r: r, id: id, rng: rand.New(rand.NewPCG(seed, uint64(id)+1))}
	for i, op := range slices.Concat(stressPrivateOps, stressSharedOps) {
		named := func(s string) bool { return strings.Contains(op.name, s) }
		skip := slices.ContainsFunc(r.cfg.skip, named) || r.cfg.only != nil && !slices.ContainsFunc(r.cfg.only, named)
		if !skip && (op.defect == 0 || r.cfg.defects[op.defect]) {
			w.ops = append(w.ops, op)
			w.total += op.weight
			if i < len(stressPrivateOps) {
				w.nPriv = len(w.ops)
			}
		}
	}
	return w
}

// run makes ops random calls, then checks and closes what the worker
// made. Worker 0 asks for the early Program.Close after closeAfter calls
// (-1: none).
func (w *stressWorker) run(ops, closeAfter int) {
	defer w.r.wg.Done()
	defer func() {
		if v := recover(); v != nil {
			w.r.failf("worker %d: panic: %v\n%s\n\tlast calls:\n\t\t%s", w.id, v, debug.Stack(), strings.Join(w.log, "\n\t\t"))
		}
	}()
	w.setup()
	for i := 0; i < ops && !w.stopped && !w.r.stop.Load(); i++ {
		if w.id == 0 && i == closeAfter {
			close(w.r.closeAt)
		}
		w.step()
	}
	if w.id == 0 && closeAfter == ops {
		close(w.r.closeAt)
	}
	w.finish()
	w.cur.Store(nil)
}

// step makes one call, chosen by weight.
func (w *stressWorker) step() {
	n := w.rng.IntN(w.total)
	for i, op := range w.ops {
		if n < op.weight {
			w.cur.Store(&op.name)
			if i < w.nPriv {
				// A private operation may use a victim stream.
				w.race(&w.r.shared.victimMu, false, raceVictimClose, func() { op.run(w) })
			} else {
				op.run(w)
			}
			return
		}
		n -= op.weight
	}
}

func (w *stressWorker) pick(n int) int { return w.rng.IntN(n) }

// note logs a call.
func (w *stressWorker) note(call string) {
	if len(w.log) == 16 {
		w.log = slices.Delete(w.log, 0, 1)
	}
	w.log = append(w.log, call)
}

// fail reports a failure and ends the worker's goroutine (t.Fatal may only
// end the test's own).
func (w *stressWorker) fail(format string, args ...any) {
	w.r.failf("worker %d: %s\n\tlast calls:\n\t\t%s", w.id, fmt.Sprintf(format, args...), strings.Join(w.log, "\n\t\t"))
	runtime.Goexit()
}

// errAny, as an allowed error of expect, allows any sentinel.
var errAny = errors.New("any sentinel")

// expect checks the error of call: nil, or one matching an allowed error
// (none: only nil is right). Every error must match a sentinel. Once the
// Program is closing, ErrClosed is right for every call and stops the
// worker. It reports whether err is nil.
func (w *stressWorker) expect(call string, err error, allowed ...error) bool {
	w.note(call)
	if err == nil {
		return true
	}
	if why := stressBadError(err); why != "" {
		w.fail("%s: %s: %v", call, why, err)
	}
	if w.r.closing.Load() && errors.Is(err, ErrClosed) {
		w.stopped = true
		return false
	}
	for _, a := range allowed {
		if a == errAny || errors.Is(err, a) {
			return false
		}
	}
	if len(allowed) == 0 {
		w.fail("%s: unexpected error: %v", call, err)
	}
	w.fail("%s: unexpected error %v (allowed: %v)", call, err, allowed)
	return false
}

// checking reports whether contents can be checked: not once the Program
// is closing, which stops work midway.
func (w *stressWorker) checking() bool { return !w.r.closing.Load() }
