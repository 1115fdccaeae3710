package qd

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/backend"
)

// InitOption configures Init.
type InitOption func(*initConfig)

type initConfig struct {
	arch     Arch
	device   int  // WithDevice
	trace    bool // WithTrace (trace.go)
	fastMath bool
	debug    bool
	native   backend.NativeMode // WithNative, or QD_NATIVE
}

// Environment defaults of Init, which WithArch and WithDevice override:
// `qd run` sets them so that each process of a group gets its own device
// with no code of its own for it.
const (
	EnvArch   = "QD_ARCH"   // auto, cpu, cuda, amdgpu or vulkan
	EnvDevice = "QD_DEVICE" // a device ordinal
)

// fromEnv applies QD_ARCH and QD_DEVICE.
func (c *initConfig) fromEnv() error {
	if v := strings.TrimSpace(os.Getenv(EnvArch)); v != "" {
		a, ok := map[string]Arch{"auto": Auto, "cpu": CPU, "cuda": CUDA, "amdgpu": AMDGPU, "vulkan": Vulkan}[strings.ToLower(v)]
		if !ok {
			return fmt.Errorf("%w: Init: %s=%q: want auto, cpu, cuda, amdgpu or vulkan", ErrInvalidArgument, EnvArch, v)
		}
		c.arch = a
	}
	if v := strings.TrimSpace(os.Getenv(EnvDevice)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: Init: %s=%q: want a device ordinal (0, 1, ...)", ErrInvalidArgument, EnvDevice, v)
		}
		c.device = n
	}
	return nil
}

// WithArch chooses the backend (default Auto, or the environment's
// QD_ARCH).
func WithArch(a Arch) InitOption { return func(c *initConfig) { c.arch = a } }

// WithDevice chooses the device by its ordinal within the backend (default
// 0, or the environment's QD_DEVICE): the GPU numbered n by the CUDA driver or the HIP runtime, in the
// order `qd devices` lists them (CUDA_VISIBLE_DEVICES and
// HIP_VISIBLE_DEVICES renumber them, as for every program). The CPU
// backend has one device, 0. An ordinal the backend does not have is an
// error matching [ErrInvalidArgument] that says how many devices it has;
// with Auto, the first backend that has device n is taken.
//
// One Program drives one device; a program that uses several GPUs opens a
// Program per device. Streams of those Programs can wait for each other's
// events ([Stream.WaitEvent], [Stream.WaitStream]) and [Ndarray.CopyFromOn]
// copies between their arrays (docs/multigpu.md).
func WithDevice(n int) InitOption { return func(c *initConfig) { c.device = n } }

// WithFastMath lets GPU kernels trade Go's exact float results for speed:
// a*b+c may be fused into one rounding, and float32 division, square root,
// reciprocal square root, exp, exp2, log, log2, sin and cos use the GPU's
// approximate instructions (errors of a few ulp, larger for sin and cos far
// from zero, and for exp and log of large arguments; docs/accuracy.md
// gives the bounds), with float32 denormals flushed to zero. Without it
// (the default) every result is Go's, bit for bit, except the documented
// transcendental bounds. The CPU backend always keeps Go's semantics.
func WithFastMath() InitOption { return func(c *initConfig) { c.fastMath = true } }

// WithDebug makes GPU kernels check every array index, as the CPU backend
// always does. An access out of range does not happen (a load reads zero,
// a store or an atomic is skipped), and the first one of a launch is
// reported as an error naming the kernel, the array, the index, the extent
// and the source position, by the next Synchronize of the stream the
// kernel was launched on (or [Program.Synchronize]), like any error raised while a
// kernel runs. Checked kernels are slower: each access compares its
// indices and the vector and unrolled loops are off (docs/performance.md
// has the cost). Without it (the default) a GPU kernel indexing out of
// range reads or writes whatever lies there, or faults.
func WithDebug() InitOption { return func(c *initConfig) { c.debug = true } }

// WithNative chooses how the CPU backend runs a kernel that `qd gen`
// generated. By default it times the generated code and its closure
// compiler on the kernel's first launches (three each) and keeps the
// faster: the generated code, compiled by the Go compiler into the
// program, runs at plain Go's speed, and the closures' SIMD passes beat
// plain Go on some float loops (docs/cpu.md). WithNative(true) always runs
// the generated code, WithNative(false) never does (to compare the two, or
// rule the generated code out). QD_NATIVE=1 or QD_NATIVE=0 in the
// environment does the same for every Program that has no WithNative.
// GPU backends ignore it.
func WithNative(on bool) InitOption {
	return func(c *initConfig) {
		c.native = backend.NativeOff
		if on {
			c.native = backend.NativeOn
		}
	}
}

// StreamOption configures [Program.NewStream].
type StreamOption func(*streamConfig)

type streamConfig struct {
	priority    int
	hasPriority bool
}

// WithPriority sets a stream's priority. As in CUDA, a lower number is a
// higher priority; 0 is the default and the lowest. Values beyond what the
// device offers are clamped to its range (the CPU has a single priority).
func WithPriority(p int) StreamOption {
	return func(c *streamConfig) { c.priority, c.hasPriority = p, true }
}

// EventOption configures [Program.NewEvent].
type EventOption func(*eventConfig)

type eventConfig struct{ timing bool }

// WithTiming makes an event usable with [Elapsed]. Timing is off by default
// because it makes recording slower on GPUs.
func WithTiming() EventOption { return func(c *eventConfig) { c.timing = true } }
