//go:build race

package vulkan

// raceEnabled: sync.Pool drops items at random under the race detector, so
// allocation counts are not checked then.
const raceEnabled = true
