//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// ownGroup puts cmd in a process group of its own: a terminal's Ctrl-C
// reaches qd run alone, which passes it on once.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalOf is the signal that ended the process, or 0.
func signalOf(ee *exec.ExitError) int {
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
