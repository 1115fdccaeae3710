package kabi

import (
	"math"
	"testing"
)

func TestGridFor(t *testing.T) {
	cases := []struct {
		total     int64
		block     int
		maxBlocks int
		want      uint32
	}{
		{0, 256, 1056, 0},
		{-5, 256, 1056, 0},
		{1, 256, 1056, 1},
		{256, 256, 1056, 1},
		{257, 256, 1056, 2},
		{1 << 20, 256, 1056, 1056}, // capped: the kernel strides
		{1000, 128, 1 << 20, 8},
		{math.MaxInt64, 1, math.MaxInt, math.MaxInt32},
		{10, 0, 0, 1}, // degenerate inputs stay launchable
	}
	for _, c := range cases {
		if got := GridFor(c.total, c.block, c.maxBlocks); got != c.want {
			t.Errorf("GridFor(%d, %d, %d) = %d, want %d", c.total, c.block, c.maxBlocks, got, c.want)
		}
	}
}

func TestMaxBlocks(t *testing.T) {
	cases := []struct{ sms, perSM, block, want int }{
		{132, 2048, 256, GridWaves * 132 * 8},  // H100 SXM
		{132, 2048, 1024, GridWaves * 132 * 2}, //
		{132, 2048, 1, GridWaves * 132 * 2048}, // serial-sized blocks
		{80, 1536, 1024, GridWaves * 80},       // at least one block per SM
		{0, 0, 0, GridWaves},
	}
	for _, c := range cases {
		if got := MaxBlocks(c.sms, c.perSM, c.block, 0); got != c.want {
			t.Errorf("MaxBlocks(%d, %d, %d) = %d, want %d", c.sms, c.perSM, c.block, got, c.want)
		}
	}
	if got, want := MaxBlocks(132, 2048, 256, 24), 24*132*8; got != want {
		t.Errorf("MaxBlocks(132, 2048, 256, 24) = %d, want %d", got, want)
	}
}
