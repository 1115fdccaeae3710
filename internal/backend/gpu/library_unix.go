//go:build darwin || freebsd || linux || netbsd

package gpu

import "github.com/ebitengine/purego"

func openLibrary(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func lookup(h uintptr, name string) uintptr {
	addr, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return addr
}
