package cpu

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	cg "github.com/quadrants-go/qd/internal/codegen/cpu"
	"github.com/quadrants-go/qd/internal/lower"
)

// Device is the CPU as a backend.Device.
type Device struct{}

// New returns the CPU device.
func New() *Device { return &Device{} }

var _ backend.Device = (*Device)(nil)
var _ backend.HostWrapper = (*Device)(nil)

func (d *Device) Arch() string { return "cpu" }

func (d *Device) Describe() string {
	return fmt.Sprintf("CPU (%s/%s, %d threads)", runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
}

func (d *Device) PriorityRange() (least, greatest int) { return 0, 0 }

func (d *Device) NewStream(priority int) (backend.Stream, error) { return newStream(d), nil }

func (d *Device) WrapStream(handle uintptr) (backend.Stream, error) {
	return nil, fmt.Errorf("cpu backend: wrapping a foreign stream handle: %w", backend.ErrUnsupported)
}

func (d *Device) NewEvent(timing bool) (backend.Event, error) { return &event{timing: timing}, nil }

func (d *Device) event(e backend.Event) (*event, error) {
	ev, ok := e.(*event)
	if !ok {
		return nil, fmt.Errorf("cpu backend: not a CPU event: %T", e)
	}
	return ev, nil
}

func (d *Device) Alloc(bytes int) (backend.Buffer, error) {
	if bytes < 0 || bytes > maxAlloc() {
		return nil, fmt.Errorf("cpu backend: allocation of %d bytes: more than this machine's memory (%d bytes): %w", bytes, maxAlloc(), backend.ErrOutOfMemory)
	}
	mem := make([]uint64, (bytes+7)/8+1) // +1: a valid pointer even for 0 bytes
	return &buffer{mem: mem, ptr: unsafe.Pointer(&mem[0]), bytes: bytes}, nil
}

// AllocOn is Alloc: the CPU has no memory pool to order; the buffer's
// FreeOn runs after the stream's earlier work.
func (d *Device) AllocOn(_ backend.Stream, bytes int) (backend.Buffer, error) { return d.Alloc(bytes) }

// AllocHost is plain memory: the CPU backend's copies are memory moves.
func (d *Device) AllocHost(bytes int) (backend.HostBuffer, error) {
	b, err := d.Alloc(bytes)
	if err != nil {
		return nil, err
	}
	return &hostBuffer{*b.(*buffer)}, nil
}

// WrapHost uses host memory directly as a buffer.
func (d *Device) WrapHost(p unsafe.Pointer, bytes int) (backend.Buffer, error) {
	return &buffer{ptr: p, bytes: bytes}, nil
}

func (d *Device) Compile(plan *lower.Plan, _ backend.CompileOptions) (backend.Module, error) {
	prog, err := cg.Compile(plan)
	if err != nil {
		return nil, err
	}
	return &module{prog: prog}, nil
}

func (d *Device) Close() error { return nil }

// maxAlloc is the largest allocation tried: the machine's memory where
// /proc/meminfo says it, else 1 TiB. Larger requests get an error instead
// of a runtime panic or an out-of-memory crash.
var maxAlloc = sync.OnceValue(func() int {
	limit := 1 << 40
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return limit
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			if kb, err := strconv.Atoi(f[1]); err == nil && kb > 0 {
				return min(kb*1024, limit)
			}
		}
	}
	return limit
})
