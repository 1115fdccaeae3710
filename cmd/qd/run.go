package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quadrants-go/qd"
)

// qd run -n N prog args…: a process group on this host. Each process gets
// torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), a token of the run (QD_COMM_TOKEN), and its
// device (QD_ARCH, QD_DEVICE), so that qd.Init and qd.NewComm need no
// arguments. Output lines are prefixed with the rank; signals go to
// every process; the first process that fails makes the run fail, and
// the others are stopped after a grace period.

const runUsage = `usage: qd run [flags] prog [args...]

Starts N processes of prog, a process group for qd.NewComm: each with
RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
(torchrun's names) and QD_COMM_TOKEN set, and QD_ARCH and QD_DEVICE
choosing its device: one GPU each where the host has N of them, the CPU
otherwise (or as -arch says). prog is an executable, or a Go file, directory
or package (./cmd/x), which qd run builds first with 'go build'.

flags:
`

type runConfig struct {
	n        int
	arch     string
	port     int
	grace    time.Duration
	noPrefix bool
}

func runCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, runUsage)
		fs.PrintDefaults()
	}
	var c runConfig
	fs.IntVar(&c.n, "n", 2, "processes to start")
	fs.StringVar(&c.arch, "arch", "auto", "backend of every process: auto (a GPU each where there are n, else the CPU), cpu, cuda or amdgpu")
	fs.IntVar(&c.port, "port", 0, "MASTER_PORT (0: a free port)")
	fs.DurationVar(&c.grace, "grace", 10*time.Second, "how long the other processes may run on after one fails, before they are stopped")
	fs.BoolVar(&c.noPrefix, "noprefix", false, "do not prefix output lines with the rank")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return 2
	}
	if c.n < 1 {
		fmt.Fprintf(stderr, "qd run: -n %d: at least 1 process\n", c.n)
		return 2
	}
	arch, device, err := runDevices(c)
	if err != nil {
		fmt.Fprintln(stderr, "qd run:", err)
		return 2
	}
	prog, cleanup, err := runProgram(fs.Arg(0), stderr)
	if err != nil {
		fmt.Fprintln(stderr, "qd run:", err)
		return 1
	}
	defer cleanup()
	port := c.port
	if port == 0 {
		if port, err = freePort(); err != nil {
			fmt.Fprintln(stderr, "qd run:", err)
			return 1
		}
	}
	env := map[string]string{
		"WORLD_SIZE": strconv.Itoa(c.n), "LOCAL_WORLD_SIZE": strconv.Itoa(c.n),
		"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": strconv.Itoa(port),
		"QD_COMM_TOKEN": runToken(), qd.EnvArch: arch,
	}
	return runGroup(c, prog, fs.Args()[1:], env, device, stdout, stderr)
}

// runDevices chooses every process's backend: the GPU backend that has n
// devices (process r takes device r), or the CPU.
func runDevices(c runConfig) (string, bool, error) {
	switch strings.ToLower(c.arch) {
	case "cpu":
		return "cpu", false, nil
	case "cuda", "amdgpu":
		a := strings.ToLower(c.arch)
		if have := gpuCount(a); have < c.n {
			return "", false, fmt.Errorf("-arch %s: %d processes need %d GPUs, this host has %d", a, c.n, c.n, have)
		}
		return a, true, nil
	case "auto":
		for _, a := range []string{"cuda", "amdgpu"} {
			if gpuCount(a) >= c.n {
				return a, true, nil
			}
		}
		return "cpu", false, nil
	}
	return "", false, fmt.Errorf("-arch %q: want auto, cpu, cuda or amdgpu (collectives run on NCCL/RCCL or on the CPU)", c.arch)
}

func gpuCount(arch string) int {
	n := 0
	for _, d := range qd.Devices() {
		if d.Arch.String() == arch && d.Err == nil {
			n++
		}
	}
	return n
}

// runProgram is prog as an executable: built first when it is Go source.
func runProgram(prog string, stderr io.Writer) (string, func(), error) {
	nothing := func() {}
	st, err := os.Stat(prog)
	switch {
	case strings.HasSuffix(prog, ".go"):
	case err == nil && st.IsDir():
		if !filepath.IsAbs(prog) && !strings.HasPrefix(prog, ".") {
			prog = "./" + prog // a directory, not an import path
		}
	case err == nil:
		abs, _ := filepath.Abs(prog)
		return abs, nothing, nil
	default:
		if p, lerr := exec.LookPath(prog); lerr == nil {
			return p, nothing, nil
		}
		if filepath.IsAbs(prog) || strings.HasPrefix(prog, ".") || !strings.Contains(prog, "/") {
			return "", nil, fmt.Errorf("%s: no such program (give an executable, or a Go file, directory or package)", prog)
		}
		// An import path or a package pattern: go build says if it is not.
	}
	dir, err := os.MkdirTemp("", "qd-run-")
	if err != nil {
		return "", nil, err
	}
	out := filepath.Join(dir, "prog")
	build := exec.Command("go", "build", "-o", out, prog)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build %s: %w", prog, err)
	}
	return out, func() { os.RemoveAll(dir) }, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("choosing MASTER_PORT: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func runToken() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// runGroup starts the processes and waits for them.
func runGroup(c runConfig, prog string, args []string, env map[string]string, device bool, stdout, stderr io.Writer) int {
	var outMu sync.Mutex // whole lines from different ranks never interleave
	procs := make([]*exec.Cmd, c.n)
	type exit struct {
		rank int
		err  error
	}
	exits := make(chan exit, c.n)
	var writers []*lineWriter
	defer func() {
		for _, w := range writers {
			w.Flush()
		}
	}()
	for r := range c.n {
		cmd := exec.Command(prog, args...)
		cmd.Env = os.Environ()
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Env = append(cmd.Env, "RANK="+strconv.Itoa(r), "LOCAL_RANK="+strconv.Itoa(r))
		if device {
			cmd.Env = append(cmd.Env, qd.EnvDevice+"="+strconv.Itoa(r))
		} else {
			cmd.Env = append(cmd.Env, qd.EnvDevice+"=") // the CPU has one device, whatever the parent chose
		}
		prefix := fmt.Sprintf("[%d] ", r)
		if c.noPrefix {
			prefix = ""
		}
		ow := &lineWriter{w: stdout, prefix: prefix, mu: &outMu}
		ew := &lineWriter{w: stderr, prefix: prefix, mu: &outMu}
		writers = append(writers, ow, ew)
		cmd.Stdout, cmd.Stderr = ow, ew
		// A child's own children may keep its output open after it
		// exits: its exit counts all the same.
		cmd.WaitDelay = 2 * time.Second
		ownGroup(cmd) // a terminal's Ctrl-C reaches the children once, through qd run
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(stderr, "qd run: starting rank %d: %v\n", r, err)
			signalAll(procs[:r], syscall.SIGKILL)
			for range r {
				<-exits
			}
			return 1
		}
		procs[r] = cmd
		go func() { exits <- exit{r, cmd.Wait()} }()
	}

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	ctx, stopSigs := context.WithCancel(context.Background())
	defer stopSigs()
	go func() {
		for {
			select {
			case s := <-sigs:
				signalAll(procs, s)
			case <-ctx.Done():
				return
			}
		}
	}()

	code := 0
	var failed []string
	var timer <-chan time.Time
	for left := c.n; left > 0; {
		select {
		case e := <-exits:
			left--
			if e.err == nil {
				continue
			}
			failed = append(failed, fmt.Sprintf("rank %d: %v", e.rank, e.err))
			if code == 0 {
				code = exitCode(e.err)
				if left > 0 {
					timer = time.After(c.grace)
				}
			}
		case <-timer:
			outMu.Lock()
			fmt.Fprintf(stderr, "qd run: stopping the processes still running %v after the first failure\n", c.grace)
			outMu.Unlock()
			signalAll(procs, syscall.SIGTERM)
			timer = nil
			kill := time.AfterFunc(5*time.Second, func() { signalAll(procs, syscall.SIGKILL) })
			defer kill.Stop()
		}
	}
	if code != 0 {
		outMu.Lock()
		fmt.Fprintf(stderr, "qd run: %d of %d processes failed: %s\n", len(failed), c.n, strings.Join(failed, "; "))
		outMu.Unlock()
	}
	return code
}

// lineWriter writes whole lines to w, each after prefix, under mu; Flush
// writes a last line that has no newline. exec copies a child's output
// into it from one goroutine.
type lineWriter struct {
	w      io.Writer
	prefix string
	mu     *sync.Mutex
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.mu.Lock()
		io.WriteString(l.w, l.prefix)
		l.w.Write(l.buf[:i+1])
		l.mu.Unlock()
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > 64<<10 { // a very long line goes on in pieces
		l.Flush()
	}
	return len(p), nil
}

// Flush writes what is left, ending it with a newline.
func (l *lineWriter) Flush() {
	if len(l.buf) == 0 {
		return
	}
	l.mu.Lock()
	io.WriteString(l.w, l.prefix)
	l.w.Write(l.buf)
	io.WriteString(l.w, "\n")
	l.mu.Unlock()
	l.buf = nil
}

func signalAll(procs []*exec.Cmd, s os.Signal) {
	for _, p := range procs {
		if p != nil && p.Process != nil {
			p.Process.Signal(s) // an error only says it has exited
		}
	}
}

// exitCode is a failed process's status: its exit code, or 128 plus the
// signal that killed it, as shells report it.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ee.ExitCode() > 0 {
			return ee.ExitCode()
		}
		if n := signalOf(ee); n > 0 {
			return 128 + n
		}
	}
	return 1
}
