package hip

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

func init() {
	backend.Register(backend.Backend{
		Arch:       "amdgpu",
		Preference: 1, // Auto tries CUDA, then AMD GPUs, then the CPU
		Open: func(ordinal int) (backend.Device, error) {
			d, err := Open(ordinal)
			if err != nil {
				return nil, err // not a typed nil in the interface
			}
			return d, nil
		},
		Devices: Devices,
	})
}

// Available reports whether AMD GPUs can be used: nil, or an error that
// says why not (wrapping gpu.ErrNoDriver or gpu.ErrNoDevice).
func Available() error {
	_, err := loadDriver()
	return err
}

// Driver returns the HIP driver for the GPU runtime, or why there is none.
func Driver() (gpu.Driver, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Open opens AMD GPU ordinal on the GPU runtime.
func Open(ordinal int) (*gpu.Device, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	return gpu.Open(d, ordinal)
}

// Devices lists the AMD GPUs (reading properties creates nothing), or says
// why there are none.
func Devices() ([]backend.DeviceInfo, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	out := make([]backend.DeviceInfo, 0, d.devices)
	for ord := range d.devices {
		p, err := d.query(ord)
		if err != nil {
			return nil, err
		}
		out = append(out, backend.DeviceInfo{
			Ordinal: ord, Name: p.Name, Target: p.Target, Cores: p.Units,
			MemoryBytes: p.MemoryBytes, Driver: "HIP " + versionString(d.version),
		})
	}
	return out, nil
}

// Compile compiles HIP source for target through the backend's real path
// — hiprtc in a child process, with the disk cache — and returns the code
// object. It needs the HIP libraries, not a device: the tests use it to
// compile every kernel where no AMD GPU exists.
func Compile(src, name, target string) ([]byte, error) {
	l, err := openLibrary()
	if err != nil {
		return nil, err
	}
	return l.compile(src, name, target)
}

// CompilerInfo names the HIP runtime and hiprtc library found, or says why
// there are none.
func CompilerInfo() (string, error) {
	l, err := openLibrary()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("HIP %s (%s), hiprtc %s from %s", versionString(l.version), l.lib.Name, l.rtc.Version(), l.rtcLib.Name), nil
}
