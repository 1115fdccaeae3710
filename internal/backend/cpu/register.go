package cpu

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/quadrants-go/qd/internal/backend"
)

func init() {
	backend.Register(backend.Backend{
		Arch:       "cpu",
		Preference: 100, // last: it always works
		Open: func(ordinal int) (backend.Device, error) {
			if ordinal != 0 {
				return nil, fmt.Errorf("cpu backend: device %d does not exist: the CPU backend has 1 device (0)", ordinal)
			}
			return New(), nil
		},
		Devices: func() ([]backend.DeviceInfo, error) { return []backend.DeviceInfo{Info()}, nil },
	})
}

// Info describes the CPU: its model and RAM where /proc tells them.
func Info() backend.DeviceInfo {
	in := backend.DeviceInfo{
		Name:   runtime.GOARCH + " CPU",
		Cores:  runtime.GOMAXPROCS(0),
		Driver: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if runtime.GOOS != "linux" {
		return in
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if v := procField(string(b), "model name"); v != "" {
			in.Name = v
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		kb, err := strconv.ParseUint(strings.TrimSuffix(procField(string(b), "MemTotal"), " kB"), 10, 64)
		if err == nil {
			in.MemoryBytes = kb << 10
		}
	}
	return in
}

// procField returns the value of the first "key: value" line of a /proc
// file.
func procField(s, key string) string {
	for line := range strings.Lines(s) {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
