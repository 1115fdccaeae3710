package qd

import (
	"errors"
	"testing"
	"time"
	"unsafe"

	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/lower"
	"github.com/quadrants-go/qd/internal/suitekernels"
)

// nullDevice is a backend that does nothing, so that BenchmarkLaunchOverhead
// measures qd's own work per launch: binding arguments, use tracking, the
// tracing check, task dispatch. With reusable, its launches say they can be
// enqueued again (backend.Reusable), as a GPU's without temporaries do, so
// that repeated launches take the memo (relaunch.go).
type nullDevice struct{ reusable bool }

type nullStream struct{}
type nullEvent struct{}
type nullBuffer struct{ n int }
type nullModule struct {
	tasks    int
	reusable bool
}
type nullLaunch struct{ reusable bool }

func (nullDevice) Arch() string                          { return "null" }
func (nullDevice) Describe() string                      { return "null device" }
func (nullDevice) Info() backend.DeviceInfo              { return backend.DeviceInfo{Name: "null device"} }
func (nullDevice) PriorityRange() (int, int)             { return 0, 0 }
func (nullDevice) NewStream(int) (backend.Stream, error) { return nullStream{}, nil }
func (nullDevice) WrapStream(uintptr) (backend.Stream, error) {
	return nullStream{}, nil
}
func (nullDevice) NewEvent(bool) (backend.Event, error) { return nullEvent{}, nil }
func (nullDevice) Alloc(n int) (backend.Buffer, error)  { return &nullBuffer{n}, nil }
func (nullDevice) AllocOn(_ backend.Stream, n int) (backend.Buffer, error) {
	return &nullBuffer{n}, nil
}
func (nullDevice) AllocHost(n int) (backend.HostBuffer, error) {
	return nil, errors.New("null device: no host memory")
}
func (nullDevice) Close() error { return nil }
func (d nullDevice) Compile(p *lower.Plan, _ backend.CompileOptions) (backend.Module, error) {
	return &nullModule{len(p.Tasks), d.reusable}, nil
}
func (nullStream) Handle() uintptr                                         { return 1 }
func (nullStream) Synchronize() error                                      { return nil }
func (nullStream) Query() (bool, error)                                    { return true, nil }
func (nullStream) WaitEvent(backend.Event) error                           { return nil }
func (nullStream) Close() error                                            { return nil }
func (nullEvent) Record(backend.Stream) error                              { return nil }
func (nullEvent) Synchronize() error                                       { return nil }
func (nullEvent) Query() (bool, error)                                     { return true, nil }
func (nullEvent) Elapsed(backend.Event) (time.Duration, error)             { return 0, nil }
func (nullEvent) Close() error                                             { return nil }
func (b *nullBuffer) Bytes() int                                           { return b.n }
func (*nullBuffer) CopyFromHost(backend.Stream, unsafe.Pointer, int) error { return nil }
func (*nullBuffer) CopyToHost(backend.Stream, unsafe.Pointer, int) error   { return nil }
func (*nullBuffer) CopyFrom(backend.Stream, backend.Buffer, int) error     { return nil }
func (b *nullBuffer) View(_, n int) (backend.Buffer, error)                { return &nullBuffer{n}, nil }
func (*nullBuffer) FreeOn(backend.Stream) error                            { return nil }
func (*nullBuffer) Close() error                                           { return nil }
func (m *nullModule) Begin(backend.Stream, *backend.Args) (backend.Launch, error) {
	return nullLaunch{m.reusable}, nil
}
func (*nullModule) Close() error                 { return nil }
func (nullLaunch) Run(int, backend.Stream) error { return nil }
func (nullLaunch) End(backend.Stream) error      { return nil }
func (l nullLaunch) Reusable() bool              { return l.reusable }

// withNullDevice runs f with a Program on the null device.
func withNullDevice(b *testing.B, f func(p *Program)) { withNull(b, nullDevice{}, f) }

// withNull runs f with a Program on d.
func withNull(b *testing.B, d nullDevice, f func(p *Program)) {
	p, err := newProgram(d, AMDGPU, initConfig{})
	check(b, err)
	defer p.Close()
	f(p)
}

// BenchmarkLaunchOverhead is qd's own host work per LaunchOn of a
// 4-argument kernel (2 Ndarrays, 2 scalars) on an explicit stream, over a
// backend that does nothing: the part of the launch host-cost bar (docs/semantics.md#performance-bars)
// that qd itself spends, about 0.15 µs at most. "saxpy" takes the fast
// bind and the inline enqueue (launch.go's route 2), "rerun" the memo
// (route 1: the same launch over a backend whose launches are reusable),
// "groups4" a stream-parallel launch of 4 groups (fork, 3 pooled streams,
// joins).
func BenchmarkLaunchOverhead(b *testing.B) {
	saxpy := func(d nullDevice) func(b *testing.B) {
		return func(b *testing.B) {
			withNull(b, d, func(p *Program) {
				k := build(b, p, suitekernels.SaxpyN())
				x := newNdarray[float32](b, p, 16)
				y := newNdarray[float32](b, p, 16)
				s := newStream(b, p)
				args := []any{float32(2), x, y, int64(16)}
				b.ReportAllocs()
				for b.Loop() {
					if err := k.LaunchOn(s, args...); err != nil {
						b.Fatal(err)
					}
				}
				if d.reusable && k.c.memo.m.Load() == nil {
					b.Fatal("the launches did not make a memo")
				}
			})
		}
	}
	b.Run("saxpy", saxpy(nullDevice{}))
	b.Run("rerun", saxpy(nullDevice{reusable: true}))
	b.Run("groups4", func(b *testing.B) {
		withNullDevice(b, func(p *Program) {
			k := build(b, p, suitekernels.Groups(4))
			x := newNdarray[float32](b, p, 4)
			b.ReportAllocs()
			for b.Loop() {
				if err := k.Launch(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
