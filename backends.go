package qd

import (
	"github.com/quadrants-go/qd/internal/backend"
	"github.com/quadrants-go/qd/internal/backend/cuda"
)

// The GPU backends compiled in. Each opens its driver at run time, so the
// same binary runs where there is no GPU.
func init() {
	gpuOpeners[CUDA] = func() (backend.Device, error) { return cuda.Open(0) }
}
