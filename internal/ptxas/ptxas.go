package ptxas

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Tool is a ptxas found on this machine.
type Tool struct {
	Path  string
	CUDA  int   // its CUDA release, encoded as cuDriverGetVersion does (11080)
	Archs []int // of 70, 80 and 90, those it assembles for
}

// Find returns the ptxas named by $QD_PTXAS, else the one on PATH, else the
// one .ci/install-ptxas.sh unpacked under ~/.cache/qd-ptxas. The error says
// why there is none and how to install it; tests pass it to t.Skip.
var Find = sync.OnceValues(func() (Tool, error) {
	p := os.Getenv("QD_PTXAS")
	if p == "" {
		p, _ = exec.LookPath("ptxas")
	}
	if p == "" {
		if h, err := os.UserHomeDir(); err == nil {
			c := filepath.Join(h, ".cache", "qd-ptxas", "usr", "bin", "ptxas")
			if _, err := os.Stat(c); err == nil {
				p = c
			}
		}
	}
	if p == "" {
		return Tool{}, fmt.Errorf("ptxas not found ($QD_PTXAS, PATH, ~/.cache/qd-ptxas/usr/bin): " +
			"run `bash .ci/install-ptxas.sh` and eval the line it prints; PTX NOT assembled")
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	m := regexp.MustCompile(`release (\d+)\.(\d+)`).FindSubmatch(out)
	if err != nil || m == nil {
		return Tool{}, fmt.Errorf("%s --version: %v: %s", p, err, out)
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	t := Tool{Path: p, CUDA: 1000*major + 10*minor}
	help, _ := exec.Command(p, "--help").CombinedOutput()
	for _, sm := range []int{70, 80, 90} {
		// CUDA 13 dropped sm_70 as an output architecture; old releases
		// lack sm_90.
		if bytes.Contains(help, []byte(fmt.Sprintf("'sm_%d'", sm))) {
			t.Archs = append(t.Archs, sm)
		}
	}
	if len(t.Archs) == 0 {
		return Tool{}, fmt.Errorf("ptxas at %s supports none of sm_70, sm_80, sm_90", p)
	}
	return t, nil
})

var headerRE = regexp.MustCompile(`(?m)^\.version \S+\n\.target \S+\n`)

// Retarget rewrites the .version and .target lines of a PTX text.
func Retarget(text, version string, sm int) string {
	return headerRE.ReplaceAllLiteralString(text, fmt.Sprintf(".version %s\n.target sm_%d\n", version, sm))
}

// Assemble writes text to dir as name and assembles it for sm_<sm>.
// Warnings count as errors; the error holds ptxas's output and the text
// with line numbers.
func (t Tool) Assemble(dir, name string, sm int, text string) error {
	file := filepath.Join(dir, fmt.Sprintf("%s_sm%d.ptx", sanitize(name), sm))
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return err
	}
	out, err := exec.Command(t.Path, "--warning-as-error", fmt.Sprintf("-arch=sm_%d", sm), "-o", os.DevNull, file).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		return fmt.Errorf("ptxas -arch=sm_%d on %s: %v\n%s\n--- PTX ---\n%s", sm, name, err, out, Numbered(text))
	}
	return nil
}

// Numbered prefixes every line of s with its number, as ptxas counts them.
func Numbered(s string) string {
	var sb strings.Builder
	for i, l := range strings.Split(s, "\n") {
		fmt.Fprintf(&sb, "%4d %s\n", i+1, l)
	}
	return sb.String()
}

func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == os.PathSeparator {
			return '_'
		}
		return r
	}, name)
}

// Resources assembles text for sm_<sm> with ptxas -v and returns what ptxas
// reports of each entry's and function's resources ("Used 40 registers",
// "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"), for
// tests that check where a kernel's values live.
func (t Tool) Resources(dir, name string, sm int, text string) (string, error) {
	file := filepath.Join(dir, fmt.Sprintf("%s_sm%d_v.ptx", sanitize(name), sm))
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return "", err
	}
	out, err := exec.Command(t.Path, "-v", fmt.Sprintf("-arch=sm_%d", sm), "-o", os.DevNull, file).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ptxas -v -arch=sm_%d on %s: %v\n%s\n--- PTX ---\n%s", sm, name, err, out, Numbered(text))
	}
	return string(out), nil
}
