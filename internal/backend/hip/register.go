package hip

import (
	"fmt"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
)

// Auto tries CUDA (preference 0), then AMD GPUs, then the CPU.
func init() {
	backend.Register(backend.Backend{Arch: "amdgpu", Preference: 1, Open: openDevice, Devices: Devices})
}

// orNil returns v as the interface I, or a nil I (never a typed nil) with
// err.
func orNil[I any](v I, err error) (I, error) {
	if err != nil {
		var none I
		return none, err
	}
	return v, nil
}

// openDevice is Open for the registry.
func openDevice(ordinal int) (backend.Device, error) {
	d, err := Open(ordinal)
	return orNil[backend.Device](d, err)
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
	return orNil[gpu.Driver](d, err)
}

// Open opens AMD GPU ordinal on the GPU runtime.
func Open(ordinal int) (*gpu.Device, error) {
	d, err := loadDriver()
	if err == nil {
		return gpu.Open(d, ordinal)
	}
	return nil, err
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
		out = append(out, p.Info)
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
