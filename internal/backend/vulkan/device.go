package vulkan

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/vulkan/vk"
)

// Device is an open Vulkan device: a backend.Device over a logical device
// with every queue of its compute family.
type Device struct {
	vd     *vk.Device
	phys   *vk.PhysicalDeviceInfo
	info   backend.DeviceInfo
	desc   string
	queues []*queue
	// copyQueues are the transfer family's queues (xfer.go); none where
	// the device has no such family.
	copyQueues []*queue
	lim        limits

	// hostWant and hostFallback are the memory properties of host buffers
	// and staging memory: host-visible, coherent (which Vulkan promises
	// some memory type is) and cached where a type is.
	hostWant, hostFallback uint32

	nextQueue atomic.Uint32 // round-robin counter of NewStream
	closing   atomic.Bool   // set by the first Close: calls fail from then on
	lost      atomic.Pointer[lostError]

	// fma says whether the device's fma is fused (fusedFMA, probed at
	// the first Compile).
	fmaOnce sync.Once
	fma     bool
	fmaErr  error

	mu        sync.Mutex // guards the maps and timelines
	streams   map[*Stream]struct{}
	events    map[*Event]struct{}
	buffers   map[*allocation]struct{} // device buffers not freed yet
	timelines []uint64                 // semaphores of closed streams, for new ones
	hosts     hostRegistry             // live host buffers by address (own lock)
	staging   stagingPool              // (own lock)
	pool      memPool                  // freed AllocOn blocks (pool.go; own lock)

	helperState // relays of work between devices (peer.go)
}

var (
	_ backend.Device = (*Device)(nil)
)

// queue is a VkQueue. vkQueueSubmit on one queue must be externally
// synchronised: every submit to it holds mu.
type queue struct {
	h  uintptr
	mu sync.Mutex
}

// limits are the device's limits that kernel code needs, read once at
// Open.
type limits struct {
	maxPushConstants    int       // maxPushConstantsSize, bytes
	maxGroupCount       [3]uint32 // maxComputeWorkGroupCount
	maxGroupSize        [3]uint32 // maxComputeWorkGroupSize
	maxGroupInvocations int       // maxComputeWorkGroupInvocations
	maxSharedBytes      int       // maxComputeSharedMemorySize
	maxBufferBytes      uint64    // maxStorageBufferRange
	subgroupSize        int
	subgroupOps         uint32  // vk.SubgroupFeature* bits
	timestampPeriod     float64 // nanoseconds per timestamp tick
	timestampBits       int     // valid bits of the compute family's timestamps; 0: none
}

func newDevice(vd *vk.Device, info backend.DeviceInfo, p *vk.PhysicalDeviceInfo) *Device {
	l := &p.Limits
	d := &Device{
		vd:   vd,
		phys: p,
		info: info,
		lim: limits{
			maxPushConstants:    int(l.MaxPushConstantsSize),
			maxGroupCount:       l.MaxComputeWorkGroupCount,
			maxGroupSize:        l.MaxComputeWorkGroupSize,
			maxGroupInvocations: int(l.MaxComputeWorkGroupInvocations),
			maxSharedBytes:      int(l.MaxComputeSharedMemorySize),
			maxBufferBytes:      uint64(l.MaxStorageBufferRange),
			subgroupSize:        p.SubgroupSize,
			subgroupOps:         p.SubgroupOps,
			timestampPeriod:     float64(l.TimestampPeriod),
			timestampBits:       p.QueueFamilies[vd.Family].TimestampValidBits,
		},
		hostWant:     vk.MemoryPropertyHostVisible | vk.MemoryPropertyHostCoherent | vk.MemoryPropertyHostCached,
		hostFallback: vk.MemoryPropertyHostVisible | vk.MemoryPropertyHostCoherent,
		streams:      map[*Stream]struct{}{},
		events:       map[*Event]struct{}{},
		buffers:      map[*allocation]struct{}{},
	}
	for _, h := range vd.Queues {
		d.queues = append(d.queues, &queue{h: h})
	}
	for _, h := range vd.CopyQueues {
		d.copyQueues = append(d.copyQueues, &queue{h: h})
	}
	d.staging.d = d
	d.pool.limit = int(min(p.DeviceLocalBytes()/8, 1<<30))
	queues := "1 compute queue"
	if n := len(d.queues); n != 1 {
		queues = fmt.Sprintf("%d compute queues", n)
	}
	if n := len(d.copyQueues); n > 0 {
		queues += fmt.Sprintf(", %d transfer", n)
	}
	d.desc = fmt.Sprintf("%s (%s, Vulkan %s, %s)", p.Name, vk.TypeName(p.Type), vk.APIVersionString(p.APIVersion), queues)
	return d
}

// Arch is "vulkan".
func (d *Device) Arch() string { return "vulkan" }

// Describe is one line: name, type, Vulkan version and queues.
func (d *Device) Describe() string { return d.desc }

// Info describes the device as Devices lists it.
func (d *Device) Info() backend.DeviceInfo { return d.info }

// PriorityRange is 0, 0: streams have no priorities (queue priorities
// are fixed when the device is made, and drivers treat them as hints).
func (d *Device) PriorityRange() (least, greatest int) { return 0, 0 }

// WrapStream is not supported: a Vulkan queue has no handle qd could take
// over with its ordering, which lives in the stream's timeline semaphore.
func (d *Device) WrapStream(handle uintptr) (backend.Stream, error) {
	return nil, fmt.Errorf("vulkan: %w: WrapStream(%#x): Vulkan has no stream objects to wrap; use NewStream", backend.ErrUnsupported, handle)
}

// device is the logical device, for the module code: pipelines, command
// recording.
func (d *Device) device() *vk.Device { return d.vd }

// physical is what the physical device reports: Limits, SubgroupSize,
// SubgroupOps, Extensions.
func (d *Device) physical() *vk.PhysicalDeviceInfo { return d.phys }

// features are the optional features the device has and qd enabled.
func (d *Device) features() vk.Features { return d.phys.Features }

// limits are the limits kernel code needs.
func (d *Device) limits() limits { return d.lim }

// stream checks that bs is a live stream of d.
func (d *Device) stream(bs backend.Stream) (*Stream, error) {
	s, ok := bs.(*Stream)
	if !ok || s == nil {
		return nil, fmt.Errorf("vulkan: %T is not a stream of this backend", bs)
	}
	if s.d != d {
		return nil, errors.New("vulkan: the stream belongs to another device")
	}
	if err := d.usable(); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, errStreamClosed
	}
	return s, nil
}

// event checks that be is a live event of d.
func (d *Device) event(be backend.Event) (*Event, error) {
	e, ok := be.(*Event)
	if !ok || e == nil {
		return nil, fmt.Errorf("vulkan: %T is not an event of this backend", be)
	}
	if e.d != d {
		return nil, errors.New("vulkan: the event belongs to another device")
	}
	if err := d.usable(); err != nil {
		return nil, err
	}
	if e.closed.Load() {
		return nil, errEventClosed
	}
	return e, nil
}

// timeline returns a timeline semaphore for a new stream and the value it
// has reached: one a closed stream gave back, else a new one (at 0).
// Semaphores are destroyed only by Close: an event recorded on a closed
// stream, or a submit of another stream waiting for one, may still name
// them.
func (d *Device) timeline() (uint64, uint64, error) {
	d.mu.Lock()
	if n := len(d.timelines); n > 0 {
		sem := d.timelines[n-1]
		d.timelines = d.timelines[:n-1]
		d.mu.Unlock()
		v, err := d.vd.SemaphoreValue(sem)
		if err != nil {
			d.giveTimeline(sem)
			return 0, 0, d.wrap(err)
		}
		return sem, v, nil
	}
	d.mu.Unlock()
	sem, err := d.vd.CreateTimeline()
	return sem, 0, d.wrap(err)
}

func (d *Device) giveTimeline(sem uint64) {
	d.mu.Lock()
	d.timelines = append(d.timelines, sem)
	d.mu.Unlock()
}

// Close waits for the device's work, then releases everything it made
// that is still open (package qd closes its objects first) and destroys
// the device. Close is idempotent. A lost device is released without
// waiting.
func (d *Device) Close() error {
	if !d.closing.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	// Relays that hold d (peer.go) finish, making the submits they held,
	// before the device is waited for and anything they name destroyed;
	// none starts once closing is set (enter reads it under mu). Waiting
	// for the device before them would race their submits, which
	// vkDeviceWaitIdle forbids.
	d.mu.Lock()
	d.mu.Unlock()
	d.relays.Wait()
	if d.lost.Load() == nil {
		if err := d.vd.WaitIdle(); err != nil {
			errs = append(errs, d.wrap(err))
		}
	}
	d.mu.Lock()
	streams, events, bufs := mapKeys(d.streams), mapKeys(d.events), mapKeys(d.buffers)
	hosts := d.hosts.all()
	d.mu.Unlock()
	for _, s := range streams {
		errs = append(errs, s.release())
	}
	errs = append(errs, d.releaseHelper())
	for _, e := range events {
		e.release()
	}
	for _, a := range bufs {
		a.free()
	}
	for _, h := range hosts {
		h.free()
	}
	d.staging.release()
	for _, m := range d.pool.drain() {
		d.vd.Free(m)
	}
	d.mu.Lock()
	for _, sem := range d.timelines {
		d.vd.DestroySemaphore(sem)
	}
	d.timelines = nil
	d.mu.Unlock()
	if d.lost.Load() == nil && errors.Join(errs...) == nil {
		idle.keep(d.info.Ordinal, d.vd) // register.go
	} else {
		d.vd.Destroy()
	}
	if l := d.lost.Load(); l != nil {
		errs = append(errs, l)
	}
	return errors.Join(errs...)
}

func mapKeys[K comparable](m map[K]struct{}) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// String names the device for messages.
func (d *Device) String() string { return fmt.Sprintf("vulkan device %d", d.info.Ordinal) }
