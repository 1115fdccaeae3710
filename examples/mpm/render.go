package main

import (
	"bufio"
	"image"
	"image/color"
	"image/gif"
	"image/png"
	"math"
	"os"
)

// renderer draws particles into paletted frames: each particle spreads one
// unit of density over the four pixels around it (bilinear weights), and
// a pixel's colour runs from the background through the fluid's colour to
// white as its density rises, so dense and thin fluid look different and
// the picture does not depend on particles landing on pixel centres.
type renderer struct {
	size    int
	scale   float32 // density of the initial block: one unit
	palette color.Palette
	density []float32
	tmp     []float32 // blur's scratch
}

// levels is the number of colours of the palette after the background.
const levels = 63

// newRenderer returns a renderer of size×size pictures of n particles.
func newRenderer(size, n int) *renderer {
	bg := color.RGBA{0x11, 0x2f, 0x41, 0xff} // the 88-line version's colours
	fluid := color.RGBA{0x06, 0x85, 0x87, 0xff}
	hi := color.RGBA{0xb8, 0xec, 0xe8, 0xff}
	pal := color.Palette{bg}
	for k := 1; k <= levels; k++ {
		t := float64(k) / levels
		if t <= 0.7 {
			pal = append(pal, lerp(bg, fluid, t/0.7))
		} else {
			pal = append(pal, lerp(fluid, hi, (t-0.7)/0.3))
		}
	}
	// The block [0.2, 0.6]² holds n particles over 0.16·size² pixels.
	return &renderer{size: size, scale: 0.16 * float32(size*size) / float32(n), palette: pal,
		density: make([]float32, size*size)}
}

// lerp mixes a and b: t = 0 is a, 1 is b.
func lerp(a, b color.RGBA, t float64) color.RGBA {
	mix := func(x, y uint8) uint8 { return uint8(float64(x) + t*(float64(y)-float64(x)) + 0.5) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// frame draws ps; y points up in the box and down in the image.
func (r *renderer) frame(ps []Particle) *image.Paletted {
	n := r.size
	clear(r.density)
	for _, p := range ps {
		fx := p.X[0]*float32(n) - 0.5
		fy := (1-p.X[1])*float32(n) - 0.5
		if !(fx >= 0 && fy >= 0 && fx < float32(n-1) && fy < float32(n-1)) {
			continue // outside the picture, or NaN
		}
		x, y := int(fx), int(fy)
		ax, ay := fx-float32(x), fy-float32(y)
		k := y*n + x
		r.density[k] += (1 - ax) * (1 - ay)
		r.density[k+1] += ax * (1 - ay)
		r.density[k+n] += (1 - ax) * ay
		r.density[k+n+1] += ax * ay
	}
	r.blur()
	img := image.NewPaletted(image.Rect(0, 0, n, n), r.palette)
	for k, d := range r.density {
		if d > 0 {
			// 1 - e^(-1.2d) compresses the density: one unit (the block at
			// rest) is 0.7 of the palette, near the fluid's colour, and the
			// pixel-scale clumps of randomly placed particles (half a unit
			// either way) stay close to it.
			t := 1 - math.Exp(-1.2*float64(d*r.scale))
			img.Pix[k] = uint8(1 + min(levels-1, int(t*levels)))
		}
	}
	return img
}

// blur smooths the density with the 3×3 tent [1 2 1]ᵀ[1 2 1]/16, so that
// the fluid reads as a body rather than as speckles of single particles.
func (r *renderer) blur() {
	n := r.size
	if len(r.tmp) != len(r.density) {
		r.tmp = make([]float32, len(r.density))
	}
	// tent blurs src into dst along one axis with [1 2 1]/4: line l starts
	// at l·across and its points are along apart.
	tent := func(src, dst []float32, along, across int) {
		for l := range n {
			o := l * across
			for k := range n {
				c := 2 * src[o+k*along]
				if k > 0 {
					c += src[o+(k-1)*along]
				}
				if k < n-1 {
					c += src[o+(k+1)*along]
				}
				dst[o+k*along] = c / 4
			}
		}
	}
	tent(r.density, r.tmp, 1, n) // along rows
	tent(r.tmp, r.density, n, 1) // along columns
}

// writeGIF writes frames as an animation that loops, delay hundredths of a
// second apart.
func writeGIF(path string, frames []*image.Paletted, delay int) error {
	delays := make([]int, len(frames))
	for k := range delays {
		delays[k] = delay
	}
	return writeFile(path, func(f *bufio.Writer) error {
		return gif.EncodeAll(f, &gif.GIF{Image: frames, Delay: delays})
	})
}

// writePNG writes one frame as a PNG.
func writePNG(path string, img image.Image) error {
	return writeFile(path, func(f *bufio.Writer) error { return png.Encode(f, img) })
}

// writeFile creates path and writes it through a buffer, reporting the
// first error of writing, flushing or closing.
func writeFile(path string, write func(*bufio.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := write(w); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
