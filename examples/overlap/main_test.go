package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 1<<14, 8, 4); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "results match the Go reference") {
		t.Errorf("output: %s", out.String())
	}
}
