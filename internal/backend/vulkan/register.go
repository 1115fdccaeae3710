package vulkan

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/gpu"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Auto tries CUDA (preference 0), AMD GPUs (1), then Vulkan, then the CPU
// (100), which always works.
func init() {
	backend.Register(backend.Backend{Arch: "vulkan", Preference: 2, Open: openDevice, OpenAuto: openAuto, Devices: Devices})
}

// openAuto is what qd.Auto opens: a Vulkan device that is a GPU. A device
// that runs on the CPU (lavapipe, SwiftShader) is refused there, since the
// CPU backend runs kernels faster on the same cores; WithArch(Vulkan)
// still opens it.
func openAuto(ordinal int) (backend.Device, error) {
	_, devs, err := instance()
	if err != nil {
		return nil, err
	}
	if ordinal >= 0 && ordinal < len(devs) && devs[ordinal].info.Type == vk.PhysicalDeviceTypeCPU {
		return nil, fmt.Errorf("vulkan: %w: device %d (%s) runs on the CPU, which qd.Auto leaves to the CPU backend; qd.WithArch(qd.Vulkan) opens it", gpu.ErrNoDevice, ordinal, devs[ordinal].info.Name)
	}
	return openDevice(ordinal)
}

// openDevice is Open for the registry: never a typed nil in the interface.
func openDevice(ordinal int) (backend.Device, error) {
	d, err := Open(ordinal)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// physical is a physical device qd can list: one with a compute queue
// family.
type physical struct {
	info       *vk.PhysicalDeviceInfo
	driverName string // "llvmpipe"; empty before Vulkan 1.2
	driverInfo string // "Mesa 22.3.6 (LLVM 15.0.6)"
}

// process is the Vulkan instance of the process and what it lists. It is
// made once and kept: an instance is cheap to keep and costly to make
// (the loader reads every driver's manifest), and devices of every
// Program share it.
var process struct {
	once   sync.Once
	loader *vk.Loader
	in     *vk.Instance
	devs   []physical // in the loader's order; their index is the ordinal
	err    error
}

// instance returns the process's instance and its devices with a compute
// queue, or why there are none: an error wrapping vk.ErrNoLoader (and
// gpu.ErrNoDriver) without a loader, gpu.ErrNoDevice without a device.
func instance() (*vk.Instance, []physical, error) {
	process.once.Do(func() {
		process.loader, process.in, process.devs, process.err = makeInstance()
	})
	return process.in, process.devs, process.err
}

func makeInstance() (*vk.Loader, *vk.Instance, []physical, error) {
	l, err := vk.Open()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("vulkan: %w (%w): install a Vulkan loader and a driver (on Debian or Ubuntu: apt-get install libvulkan1 mesa-vulkan-drivers; .ci/install-vulkan.sh unpacks them without installing)", err, gpu.ErrNoDriver)
	}
	in, err := l.CreateInstance("qd")
	if err != nil {
		if errors.Is(err, vk.ErrNoLoader) {
			return nil, nil, nil, fmt.Errorf("vulkan: %w (%w)", err, gpu.ErrNoDriver)
		}
		return nil, nil, nil, fmt.Errorf("vulkan: creating an instance: %w", err)
	}
	pds, err := in.PhysicalDevices()
	if err != nil {
		in.Destroy()
		return nil, nil, nil, fmt.Errorf("vulkan: listing devices: %w", err)
	}
	var devs []physical
	for _, pd := range pds {
		p, err := in.Describe(pd)
		if err != nil {
			in.Destroy()
			return nil, nil, nil, fmt.Errorf("vulkan: describing a device: %w", err)
		}
		if p.ComputeFamily() < 0 {
			continue
		}
		name, info := in.Driver(pd, p.APIVersion)
		devs = append(devs, physical{info: p, driverName: name, driverInfo: info})
	}
	if len(devs) == 0 {
		in.Destroy()
		return nil, nil, nil, fmt.Errorf("vulkan: %w: the loader %s lists %d device(s), none with a compute queue (is a driver installed? VK_DRIVER_FILES names manifests explicitly)", gpu.ErrNoDevice, l.Name, len(pds))
	}
	return l, in, devs, nil
}

// Devices lists the physical devices with a compute queue, without
// opening them, or says why there are none.
func Devices() ([]backend.DeviceInfo, error) {
	_, devs, err := instance()
	if err != nil {
		return nil, err
	}
	out := make([]backend.DeviceInfo, len(devs))
	for i := range devs {
		out[i] = devs[i].deviceInfo(i)
	}
	return out, nil
}

// deviceInfo is p as Devices lists it with ordinal ord.
func (p *physical) deviceInfo(ord int) backend.DeviceInfo {
	v := p.info.APIVersion
	drv := []string{"Vulkan " + vk.APIVersionString(v)}
	if process.loader != nil {
		drv = append(drv, "loader "+vk.APIVersionString(process.loader.Version()))
	}
	switch {
	case p.driverName != "" && p.driverInfo != "":
		drv = append(drv, p.driverName+" "+p.driverInfo)
	case p.driverName != "":
		drv = append(drv, p.driverName)
	}
	return backend.DeviceInfo{
		Ordinal:     ord,
		Name:        p.info.Name,
		Target:      fmt.Sprintf("vulkan-%d.%d", v>>22&0x7f, v>>12&0x3ff),
		MemoryBytes: p.info.DeviceLocalBytes(),
		Driver:      strings.Join(drv, ", "),
		Details:     p.details(),
		Software:    p.info.Type == vk.PhysicalDeviceTypeCPU,
	}
}

// Open opens device ordinal (in Devices' order): a logical device with
// every queue of its compute family.
func Open(ordinal int) (*Device, error) {
	in, devs, err := instance()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= len(devs) {
		return nil, fmt.Errorf("vulkan: %w: device %d does not exist: there are %d Vulkan device(s) with a compute queue", gpu.ErrNoDevice, ordinal, len(devs))
	}
	p := &devs[ordinal]
	vd := idle.take(ordinal)
	if vd == nil {
		if vd, err = in.CreateDevice(p.info); err != nil {
			return nil, fmt.Errorf("vulkan: opening device %d (%s): %w", ordinal, p.info.Name, err)
		}
	}
	return newDevice(vd, p.deviceInfo(ordinal), p.info), nil
}

// idle keeps, per physical device, one logical device that a closed
// Device left, with nothing of its own in it any more, for the next Open:
// vkCreateDevice and vkDestroyDevice took 150-250 ms and about 90 ms on
// NVIDIA's driver, where qd's bars give Init 50 ms and Close 20 ms (CUDA
// keeps its primary context for the process in the same way). A device
// lost is destroyed, never kept.
var idle idleDevices

type idleDevices struct {
	mu   sync.Mutex
	devs map[int]*vk.Device
}

// take returns the kept device of ordinal, nil when none is kept.
func (c *idleDevices) take(ordinal int) *vk.Device {
	c.mu.Lock()
	defer c.mu.Unlock()
	vd := c.devs[ordinal]
	delete(c.devs, ordinal)
	return vd
}

// keep keeps vd, a device with nothing of its own left and no work, for
// ordinal's next Open, or destroys it when one is kept already.
func (c *idleDevices) keep(ordinal int, vd *vk.Device) {
	c.mu.Lock()
	if c.devs == nil {
		c.devs = map[int]*vk.Device{}
	}
	if _, ok := c.devs[ordinal]; !ok {
		c.devs[ordinal] = vd
		vd = nil
	}
	c.mu.Unlock()
	if vd != nil {
		vd.Destroy()
	}
}

// Queue family flags beyond vk's: named in qd devices' listing.
const (
	queueVideoDecode = 0x20  // VK_QUEUE_VIDEO_DECODE_BIT_KHR
	queueVideoEncode = 0x40  // VK_QUEUE_VIDEO_ENCODE_BIT_KHR
	queueOpticalFlow = 0x100 // VK_QUEUE_OPTICAL_FLOW_BIT_NV
)

// details are the lines `qd devices` prints under the device: its type,
// queue families, features and the limits kernels meet.
func (p *physical) details() []string {
	in := p.info
	out := []string{"type: " + vk.TypeName(in.Type)}
	for i, q := range in.QueueFamilies {
		var caps []string
		for _, c := range []struct {
			bit  uint32
			name string
		}{{vk.QueueGraphics, "graphics"}, {vk.QueueCompute, "compute"}, {vk.QueueTransfer, "transfer"},
			{queueVideoDecode, "video decode"}, {queueVideoEncode, "video encode"}, {queueOpticalFlow, "optical flow"}} {
			if q.Flags&c.bit != 0 {
				caps = append(caps, c.name)
			}
		}
		out = append(out, fmt.Sprintf("queue family %d: %d queue(s), %s", i, q.Count, strings.Join(caps, "+")))
	}
	f := in.Features
	var feats []string
	for _, x := range []struct {
		on   bool
		name string
	}{
		{f.Float64, "float64"}, {f.Int64, "int64"}, {f.Int16, "int16"}, {f.Int8, "int8"},
		{f.StorageBuffer8Bit, "8-bit storage"}, {f.StorageBuffer16, "16-bit storage"},
		{f.BufferInt64Atomics, "int64 atomics"}, {f.BufferFloat32AtomicAdd, "float32 atomic add"},
		{f.BufferFloat64AtomicAdd, "float64 atomic add"}, {f.TimelineSemaphore, "timeline semaphores"},
		{f.BufferDeviceAddress, "buffer device address"},
	} {
		if x.on {
			feats = append(feats, x.name)
		}
	}
	out = append(out, "features: "+strings.Join(feats, ", "))
	out = append(out, fmt.Sprintf("limits: %d bytes of push constants, work groups of up to %d, subgroups of %d, %d KiB of shared memory a block",
		in.Limits.MaxPushConstantsSize, in.Limits.MaxComputeWorkGroupInvocations, in.SubgroupSize, in.Limits.MaxComputeSharedMemorySize>>10))
	return out
}
