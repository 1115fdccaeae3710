//go:build race

package qd

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = true
