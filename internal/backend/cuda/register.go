package cuda

import "github.com/quadrants-go/qd/internal/backend"

func init() {
	backend.Register(backend.Backend{
		Arch:       "cuda",
		Preference: 0, // Auto tries CUDA first
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
