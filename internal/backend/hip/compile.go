package hip

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/codegen/csrc"
)

// childEnv switches a process into the compiler child: the init of this
// package sees it, runs one hiprtc compile described on stdin, writes the
// result to stdout and exits, before main runs. See the package doc for
// why compiles run in a child.
const childEnv = "QD_HIP_COMPILER_CHILD"

// cacheEnv names the folder of the code object cache ("off": no cache);
// by default os.UserCacheDir()/qd/hip.
const cacheEnv = "QD_HIP_CACHE"

func init() {
	if os.Getenv(childEnv) != "" {
		os.Exit(child(os.Stdin, os.Stdout))
	}
}

// request is what the parent sends the child; answer what comes back.
type request struct {
	Source  string
	Name    string
	Options []string
}

type answer struct {
	Code  []byte
	Log   string
	Error *gpu.DriverError // a failing hiprtc call, with the log
	Other string           // any other failure (the library would not load)
}

// child runs in the child process: one compile, answered as JSON.
func child(in io.Reader, out io.Writer) int {
	var req request
	var ans answer
	if err := json.NewDecoder(in).Decode(&req); err != nil {
		ans.Other = "reading the request: " + err.Error()
	} else if l, err := openLibrary(); err != nil {
		ans.Other = err.Error()
	} else {
		var err error
		ans.Code, ans.Log, err = l.rtc.Run(req.Source, req.Name, req.Options)
		if de := (*gpu.DriverError)(nil); errors.As(err, &de) {
			ans.Error = de
		} else if err != nil {
			ans.Other = err.Error()
		}
	}
	if err := json.NewEncoder(out).Encode(&ans); err != nil {
		return 1
	}
	return 0
}

// compilerID identifies the compiler for the cache: the runtime's version
// and the library hiprtc came from.
func (l *library) compilerID() string {
	return fmt.Sprintf("hip %d hiprtc %s %s", l.version, l.rtc.Version(), l.rtcLib.Name)
}

// compile turns HIP source into a code object for target (a gcnArchName
// such as "gfx90a:sramecc+:xnack-"): from the disk cache, keyed by the
// source, the target, the options and the compiler, or else by hiprtc in a
// child process, whose result is then cached.
func (l *library) compile(src, name, target string) ([]byte, error) {
	opts := append([]string{"--gpu-architecture=" + target}, csrc.CompilerOptions(csrc.AMD)...)
	key := cacheKey(l.compilerID(), opts, src)
	if co := cacheGet(key); co != nil {
		return co, nil
	}
	co, err := l.runChild(request{Source: src, Name: name + ".hip", Options: opts})
	if err != nil {
		return nil, fmt.Errorf("amdgpu: compiling %s for %s: %w", name, target, err)
	}
	cachePut(key, co)
	return co, nil
}

// childSlots bounds the compilers running at once: each loads LLVM.
var childSlots = make(chan struct{}, max(runtime.NumCPU(), 2))

// runChild runs one compile in a child process (this executable, switched
// by childEnv) and returns its code object. A child that dies without an
// answer — Debian's ROCm 5.2 hiprtc aborts for gfx940, gfx942 and gfx1100 —
// is an error wrapping backend.ErrUnsupported that quotes its output.
func (l *library) runChild(req request) ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("hiprtc runs in a child process, but this executable cannot be found: %w", err)
	}
	in, err := json.Marshal(&req)
	if err != nil {
		return nil, err
	}
	childSlots <- struct{}{}
	defer func() { <-childSlots }()
	cmd := exec.Command(exe)
	switchTo := l.childSwitch
	if switchTo == "" {
		switchTo = childEnv + "=1"
	}
	cmd.Env = append(os.Environ(), switchTo)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var ans answer
	if decErr := json.Unmarshal(stdout.Bytes(), &ans); runErr != nil || decErr != nil {
		why := runErr
		if why == nil {
			why = decErr
		}
		return nil, fmt.Errorf("%w: hiprtc (%s) crashed: the compiler process (%s) died without an answer: %v; its output:\n%s",
			backend.ErrUnsupported, l.rtcLib.Name, exe, why, crashMessage(stderr.String()))
	}
	switch {
	case ans.Error != nil:
		return nil, ans.Error
	case ans.Other != "":
		return nil, errors.New(ans.Other)
	case len(ans.Code) == 0:
		return nil, fmt.Errorf("hiprtc returned an empty code object")
	}
	return ans.Code, nil
}

// crashMessage is what a dead child said before the Go runtime's dump of
// its registers and goroutines: the C library's message and the signal
// ("munmap_chunk(): invalid pointer", "SIGABRT: abort").
func crashMessage(stderr string) string {
	var keep []string
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "PC=") || strings.HasPrefix(line, "goroutine ") || len(keep) == 20 {
			break
		}
		keep = append(keep, strings.TrimRight(line, "\n"))
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}

func cacheDir() string {
	if d := os.Getenv(cacheEnv); d != "" {
		if d == "off" {
			return ""
		}
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "qd", "hip")
}

func cacheKey(compiler string, opts []string, src string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", compiler, strings.Join(opts, "\x00"))
	io.WriteString(h, src)
	return hex.EncodeToString(h.Sum(nil))
}

// cacheGet returns the cached code object of key, or nil. Only an ELF file
// counts: a truncated or foreign file is a miss.
func cacheGet(key string) []byte {
	dir := cacheDir()
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, key+".co"))
	if err != nil || !bytes.HasPrefix(b, []byte("\x7fELF")) {
		return nil
	}
	return b
}

// cachePut stores a code object; failures only cost a later compile. The
// file is written aside and renamed, so readers never see half of it.
func cachePut(key string, co []byte) {
	dir := cacheDir()
	if dir == "" || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(dir, key+".*.tmp")
	if err != nil {
		return
	}
	_, err = f.Write(co)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, key+".co"))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}
