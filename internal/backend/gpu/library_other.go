//go:build !(darwin || freebsd || linux || netbsd || windows)

package gpu

import (
	"errors"
	"runtime"
)

func openLibrary(name string) (uintptr, error) {
	return 0, errors.New("no dynamic loader for GPU drivers on " + runtime.GOOS)
}

func lookup(uintptr, string) uintptr { return 0 }
