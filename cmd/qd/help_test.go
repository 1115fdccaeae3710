package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelpForUsers: every verb's help speaks to users, who have no
// project-internal documents: no "SPEC", no issue numbers.
func TestHelpForUsers(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"devices", "--help"}, {"demo", "--help"}, {"bench", "--help"}, {"trace", "--help"}} {
		var out, errb bytes.Buffer
		run(args, &out, &errb)
		text := out.String() + errb.String()
		for _, bad := range []string{"SPEC", "issue "} {
			if strings.Contains(text, bad) {
				t.Errorf("qd %s cites %q:\n%s", strings.Join(args, " "), bad, text)
			}
		}
	}
}
