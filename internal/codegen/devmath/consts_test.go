package devmath

import (
	"math"
	"testing"
)

// The computed constants against their well-known leading digits.
func TestConstants(t *testing.T) {
	c := consts()
	if c.twoOverPi[0] != 0 || c.twoOverPi[1] != 0xA2F9836E4E441529 || c.twoOverPi[2] != 0xFC2757D1F534DDC0 {
		t.Errorf("2/π words %X %X %X", c.twoOverPi[0], c.twoOverPi[1], c.twoOverPi[2])
	}
	if c.pi[0] != math.Pi || c.pio2[0] != math.Pi/2 || c.ln2d[0] != math.Ln2 || c.log2e[0] != math.Log2E || c.log10e[0] != math.Log10E {
		t.Error("π, ln 2, log2 e or log10 e differ from package math")
	}
	if c.atanJ[8][0] != math.Pi/4 {
		t.Errorf("atan(1) = %v", c.atanJ[8][0])
	}
}
