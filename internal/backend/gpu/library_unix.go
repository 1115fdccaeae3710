//go:build darwin || freebsd || linux || netbsd

package gpu

import (
	"runtime"

	"github.com/ebitengine/purego"
)

// openLibrary holds the goroutine on one OS thread: Dlopen reads dlerror's
// message after the dlopen, and the message is per thread, so a goroutine
// moved between the two calls reported an empty reason.
func openLibrary(name string) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func lookup(h uintptr, name string) uintptr {
	addr, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return addr
}
