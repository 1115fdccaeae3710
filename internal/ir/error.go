package ir

import "fmt"

// Error is a problem found in a kernel by the verifier, by lowering or by a
// code generator: where it is, which kernel, and what is wrong. Msg should
// also say what to do instead where there is a clear alternative.
type Error struct {
	Pos    Pos
	Kernel string
	Msg    string
}

func (e *Error) Error() string {
	s := ""
	if e.Pos.IsKnown() {
		s = e.Pos.String() + ": "
	}
	if e.Kernel != "" {
		s += "kernel " + e.Kernel + ": "
	}
	return s + e.Msg
}

// Errorf makes an *Error.
func Errorf(pos Pos, kernel, format string, args ...any) *Error {
	return &Error{Pos: pos, Kernel: kernel, Msg: fmt.Sprintf(format, args...)}
}
