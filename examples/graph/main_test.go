package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(&out, 24, 10, 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "results match the Go reference") {
		t.Errorf("output: %s", out.String())
	}
}
