package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress shows what the demo is doing. On a terminal it is one line,
// rewritten in place several times a second with the phase and
// the time spent; otherwise each phase prints one plain line when it
// starts.
type progress struct {
	w     io.Writer
	tty   bool
	total int

	mu      sync.Mutex
	n       int
	name    string
	start   time.Time
	done    chan struct{}
	stopped bool
	wg      sync.WaitGroup
}

func newProgress(w io.Writer, tty bool, total int) *progress {
	pr := &progress{w: w, tty: tty, total: total, done: make(chan struct{})}
	if tty {
		pr.wg.Add(1)
		go pr.loop()
	}
	return pr
}

func (pr *progress) loop() {
	defer pr.wg.Done()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-pr.done:
			return
		case <-tick.C:
			pr.mu.Lock()
			pr.draw()
			pr.mu.Unlock()
		}
	}
}

// draw rewrites the terminal line; pr.mu is held.
func (pr *progress) draw() {
	if pr.n == 0 {
		return
	}
	line := fmt.Sprintf("[%d/%d] %s", pr.n, pr.total, pr.name)
	fmt.Fprintf(pr.w, "\r\033[K%s  %.1fs", line, time.Since(pr.start).Seconds())
}

// phase starts the next phase.
func (pr *progress) phase(name string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.stopped {
		return
	}
	pr.n++
	pr.name, pr.start = name, time.Now()
	if pr.tty {
		pr.draw()
		return
	}
	fmt.Fprintf(pr.w, "[%d/%d] %s\n", pr.n, pr.total, name)
}

// stop ends the display and clears the terminal line. It is idempotent.
func (pr *progress) stop() {
	pr.mu.Lock()
	if pr.stopped {
		pr.mu.Unlock()
		return
	}
	pr.stopped = true
	close(pr.done)
	pr.mu.Unlock()
	pr.wg.Wait()
	if pr.tty {
		fmt.Fprint(pr.w, "\r\033[K")
	}
}
