//go:build !race

package qd

const raceEnabled = false
