package qd

// The backends compiled in register themselves (backend.Register) from
// their init functions; the root package only loops over the registry. Each
// GPU backend opens its driver at run time, so the same binary runs where
// there is no GPU.
import (
	_ "github.com/quadrants-go/qd/internal/backend/cpu"
	_ "github.com/quadrants-go/qd/internal/backend/cuda"
	_ "github.com/quadrants-go/qd/internal/backend/hip"
	_ "github.com/quadrants-go/qd/internal/backend/vulkan"
)
