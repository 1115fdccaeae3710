package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quadrants-go/qd"
)

// The tests run this test binary as the processes of qd run: with
// QD_RUN_CHILD set, TestMain is the child, and does what it says.
func TestMain(m *testing.M) {
	if mode := os.Getenv("QD_RUN_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	rank, _ := strconv.Atoi(os.Getenv("RANK"))
	switch mode {
	case "env":
		for _, k := range []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "QD_COMM_TOKEN", qd.EnvArch, qd.EnvDevice} {
			fmt.Printf("%s=%s\n", k, os.Getenv(k))
		}
		fmt.Fprintln(os.Stderr, "to stderr")
		return 0
	case "fail1":
		if rank == 1 {
			fmt.Println("failing")
			return 3
		}
		time.Sleep(time.Minute) // stopped by qd run after the grace period
		return 0
	case "allreduce", "die":
		p, err := qd.Init()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer p.Close()
		c, err := qd.NewComm(p, qd.CommTimeouts(30*time.Second, 5*time.Second, 30*time.Second))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer c.Close()
		if mode == "die" && rank == 1 {
			time.Sleep(100 * time.Millisecond)
			os.Exit(7) // killed mid-run: no Close
		}
		x, _ := qd.NewNdarray[int64](p, 1000)
		vals := make([]int64, 1000)
		for i := range vals {
			vals[i] = int64(rank*1000 + i)
		}
		x.CopyFromHost(vals)
		s := p.DefaultStream()
		if err := c.AllReduceOn(s, x, qd.Sum); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := s.Synchronize(); err != nil {
			fmt.Fprintln(os.Stderr, "Synchronize:", err, "broken:", errors.Is(err, qd.ErrCommBroken))
			return 5
		}
		got, _ := x.ToSlice()
		fmt.Printf("sum[0]=%d sum[999]=%d\n", got[0], got[999])
		return 0
	}
	return 2
}

func runQD(t *testing.T, mode string, args ...string) (int, string, string, time.Duration) {
	t.Helper()
	t.Setenv("QD_RUN_CHILD", mode)
	var out, errb bytes.Buffer
	t0 := time.Now()
	code := run(append([]string{"run"}, append(args, os.Args[0])...), &out, &errb)
	return code, out.String(), errb.String(), time.Since(t0)
}

func TestRunEnvironment(t *testing.T) {
	code, out, errs, _ := runQD(t, "env", "-n", "3", "-arch", "cpu")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	vals := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rank int
		var kv string
		if _, err := fmt.Sscanf(line, "[%d] %s", &rank, &kv); err != nil {
			t.Fatalf("line %q: no rank prefix", line)
		}
		k, v, _ := strings.Cut(kv, "=")
		if k == "RANK" && v != strconv.Itoa(rank) {
			t.Errorf("[%d] has RANK=%s", rank, v)
		}
		if vals[k] == nil {
			vals[k] = map[string]bool{}
		}
		vals[k][v] = true
	}
	if len(vals["RANK"]) != 3 || !vals["WORLD_SIZE"]["3"] || !vals["QD_ARCH"]["cpu"] || len(vals["MASTER_PORT"]) != 1 || len(vals["QD_COMM_TOKEN"]) != 1 || vals["QD_COMM_TOKEN"][""] {
		t.Fatalf("environment: %v", vals)
	}
	if !strings.Contains(errs, "[2] to stderr") {
		t.Fatalf("stderr: %q", errs)
	}
}

func TestRunFailureStopsTheOthers(t *testing.T) {
	code, out, errs, d := runQD(t, "fail1", "-n", "3", "-arch", "cpu", "-grace", "300ms")
	if code != 3 {
		t.Fatalf("exit %d, want rank 1's 3: %s %s", code, out, errs)
	}
	if !strings.Contains(errs, "rank 1: exit status 3") || !strings.Contains(errs, "stopping") {
		t.Fatalf("stderr: %s", errs)
	}
	if d > 20*time.Second {
		t.Fatalf("took %v", d)
	}
}

// TestRunAllReduce is the CPU transport between real processes.
func TestRunAllReduce(t *testing.T) {
	for _, n := range []int{2, 4} {
		code, out, errs, _ := runQD(t, "allreduce", "-n", strconv.Itoa(n), "-arch", "cpu")
		if code != 0 {
			t.Fatalf("%d processes: exit %d: %s", n, code, errs)
		}
		want := fmt.Sprintf("sum[0]=%d sum[999]=%d", 1000*n*(n-1)/2, 1000*n*(n-1)/2+999*n)
		if strings.Count(out, want) != n {
			t.Fatalf("%d processes: output %q, want %q from each", n, out, want)
		}
	}
}

// TestRunRankDies: a process that exits in the middle of the run breaks
// the group; the others' Synchronize fails with ErrCommBroken, promptly.
func TestRunRankDies(t *testing.T) {
	code, out, errs, d := runQD(t, "die", "-n", "3", "-arch", "cpu", "-grace", "20s")
	if code == 0 {
		t.Fatalf("exit 0: %s", out)
	}
	if strings.Count(errs, "broken: true") != 2 || !strings.Contains(errs, "rank 1") {
		t.Fatalf("stderr: %s", errs)
	}
	if d > 15*time.Second {
		t.Fatalf("the survivors took %v", d)
	}
}

func TestRunUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "usage: qd run") {
		t.Fatalf("no program: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"run", "-n", "0", "x"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "at least 1") {
		t.Fatalf("-n 0: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"run", "-arch", "vulkan", "x"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "want auto, cpu") {
		t.Fatalf("-arch vulkan: %d %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"run", "/no/such/prog"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "no such program") {
		t.Fatalf("missing program: %d %q", code, errb.String())
	}
}
