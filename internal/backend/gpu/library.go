package gpu

import (
	"fmt"
	"strings"
)

// Library is a vendor library opened at run time through the operating
// system's loader (dlopen, LoadLibrary), so that binaries build with
// CGO_ENABLED=0 and run where the library is absent.
type Library struct {
	Name   string // the name it was opened by
	handle uintptr
}

// OpenLibrary opens the first of names that loads. The error wraps
// ErrNoDriver and says what each try gave.
func OpenLibrary(names ...string) (*Library, error) {
	var msgs []string
	for _, name := range names {
		h, err := openLibrary(name)
		if err == nil {
			return &Library{Name: name, handle: h}, nil
		}
		msgs = append(msgs, err.Error())
	}
	return nil, fmt.Errorf("%w (%s)", ErrNoDriver, strings.Join(msgs, "; "))
}

// Lookup returns the address of the exported function name, or 0.
func (l *Library) Lookup(name string) uintptr {
	if l == nil || l.handle == 0 {
		return 0
	}
	return lookup(l.handle, name)
}

// Binding binds one Fn: Names are tried in order (the first is the ABI the
// driver is written against; a later one a fallback with the same
// signature). An Optional function may stay unbound.
type Binding struct {
	Fn       *Fn
	Names    []string
	Optional bool
}

// Bind resolves every binding in l. Fn.Name is set to the name bound (the
// first name when none is), so messages name what the driver calls.
func Bind(l *Library, bs []Binding) error {
	for _, b := range bs {
		b.Fn.Name, b.Fn.Addr = b.Names[0], 0
		for _, name := range b.Names {
			if addr := l.Lookup(name); addr != 0 {
				b.Fn.Name, b.Fn.Addr = name, addr
				break
			}
		}
		if b.Fn.Addr == 0 && !b.Optional {
			return fmt.Errorf("%w: %s lacks %s (driver too old?)", ErrNoDriver, l.Name, b.Names[0])
		}
	}
	return nil
}
