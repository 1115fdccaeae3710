//go:build windows

package gpu

import "syscall"

// On Windows the vendor's DLL is found through the system loader's search
// path; calls go through purego.SyscallN as elsewhere.
func openLibrary(name string) (uintptr, error) {
	h, err := syscall.LoadLibrary(name)
	return uintptr(h), err
}

func lookup(h uintptr, name string) uintptr {
	addr, err := syscall.GetProcAddress(syscall.Handle(h), name)
	if err != nil {
		return 0
	}
	return addr
}
