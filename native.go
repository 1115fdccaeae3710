package qd

import (
	"os"

	"github.com/quadrants-go/qd/internal/backend"
)

// nativeEnv is how QD_NATIVE in the environment sets WithNative for the
// Programs that do not: 1 (on, true, yes) is WithNative(true), 0 (off,
// false, no) WithNative(false), anything else the default.
var nativeEnv = func() backend.NativeMode {
	switch os.Getenv("QD_NATIVE") {
	case "0", "off", "false", "no":
		return backend.NativeOff
	case "1", "on", "true", "yes":
		return backend.NativeOn
	}
	return backend.NativeAuto
}()

// BlockAt is block index of a [Blocks] loop whose blocks have size
// threads. The code that `qd gen` writes uses it to run a loop's blocks in
// parallel chunks; kernels use [Blocks], and cannot call it.
func BlockAt(index, size int) Block { return Block{index: index, size: size} }
