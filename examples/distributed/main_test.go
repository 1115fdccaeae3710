package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// With DISTRIBUTED_CHILD set, the test binary is one process of a group
// (the flags in DISTRIBUTED_ARGS), as qd run would start it.
func TestMain(m *testing.M) {
	if args := os.Getenv("DISTRIBUTED_CHILD"); args != "" {
		var c config
		fmt.Sscan(args, &c.rows, &c.cols, &c.sweeps, &c.every)
		c.check = true
		if err := run(os.Stdout, c); err != nil {
			fmt.Fprintln(os.Stderr, "distributed:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestGroupOfOne runs the example without a launcher.
func TestGroupOfOne(t *testing.T) {
	for _, c := range []config{{rows: 30, cols: 17, sweeps: 12, every: 5, check: true}, {rows: 1, cols: 3, sweeps: 3, check: true}} {
		var out bytes.Buffer
		if err := run(&out, c); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "rank 0: rows 0 to "+strconv.Itoa(c.rows-1)+" match plain Go") {
			t.Fatalf("output: %s", out.String())
		}
	}
}

// TestProcesses runs the example as 2 and 4 processes on the CPU, as
// `qd run -n N` starts them, each checking its rows against plain Go on
// the whole grid.
func TestProcesses(t *testing.T) {
	for _, n := range []int{2, 4} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			ln.Close()
			outs := make([]bytes.Buffer, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for r := range n {
				cmd := exec.Command(os.Args[0])
				cmd.Env = append(os.Environ(), "DISTRIBUTED_CHILD=23 19 15 4", "QD_ARCH=cpu", "RANK="+strconv.Itoa(r), "WORLD_SIZE="+strconv.Itoa(n),
					"LOCAL_RANK="+strconv.Itoa(r), "MASTER_ADDR=127.0.0.1", "MASTER_PORT="+port, "QD_COMM_TOKEN=test")
				cmd.Stdout, cmd.Stderr = &outs[r], &outs[r]
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				timer := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() })
				wg.Go(func() { errs[r] = cmd.Wait(); timer.Stop() })
			}
			wg.Wait()
			for r := range n {
				if errs[r] != nil || !strings.Contains(outs[r].String(), fmt.Sprintf("rank %d: rows", r)) {
					t.Errorf("rank %d: %v\n%s", r, errs[r], outs[r].String())
				}
			}
			if !strings.Contains(outs[0].String(), fmt.Sprintf("on %d process(es)", n)) {
				t.Errorf("rank 0: %s", outs[0].String())
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	for _, c := range []config{{rows: 0, cols: 4}, {rows: 4, cols: 2}, {rows: 4, cols: 4, sweeps: -1}} {
		if err := run(&bytes.Buffer{}, c); err == nil || !strings.Contains(err.Error(), "at least") {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
