package packaging

import (
	"image"
	"image/color"
)

// TofuLimit is how many hollow boxes a screenshot may hold before it counts as rendered without the glyphs its text
// needs. A few real glyphs are boxes (口, 囗) and so are some icons; a font-less render of one Chinese line has dozens.
const TofuLimit = 8

// TofuBoxes counts "tofu": the hollow rectangles a browser draws for characters no installed font has. A box is a
// connected run of ink (pixels contrasting with their tile's most common shade) that lies entirely on its bounding
// box's border and covers most of it, glyph-sized: 4–20 px wide, 8–26 px high, at least as high as wide.
func TofuBoxes(img image.Image) int {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	lum := make([]uint8, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			lum[y*w+x] = color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
		}
	}
	// Background: the most common shade of each 32×32 tile; text is sparse enough never to be it.
	const tile = 32
	tw, th := (w+tile-1)/tile, (h+tile-1)/tile
	bg := make([]uint8, tw*th)
	for ty := 0; ty < th; ty++ {
		for tx := 0; tx < tw; tx++ {
			var hist [256]int
			for y := ty * tile; y < min(h, (ty+1)*tile); y++ {
				for x := tx * tile; x < min(w, (tx+1)*tile); x++ {
					hist[lum[y*w+x]]++
				}
			}
			best := 0
			for v := range hist {
				if hist[v] > hist[best] {
					best = v
				}
			}
			bg[ty*tw+tx] = uint8(best)
		}
	}
	ink := make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			d := int(lum[y*w+x]) - int(bg[(y/tile)*tw+x/tile])
			ink[y*w+x] = d > 40 || d < -40
		}
	}
	seen := make([]bool, w*h)
	var stack, comp []int
	boxes := 0
	for start := range ink {
		if !ink[start] || seen[start] {
			continue
		}
		// One 8-connected component, bounded by the image: every pixel is pushed once.
		comp = comp[:0]
		stack = append(stack[:0], start)
		seen[start] = true
		x0, y0, x1, y1 := w, h, -1, -1
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			comp = append(comp, p)
			px, py := p%w, p/w
			x0, y0, x1, y1 = min(x0, px), min(y0, py), max(x1, px), max(y1, py)
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := px+dx, py+dy
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					if q := ny*w + nx; ink[q] && !seen[q] {
						seen[q] = true
						stack = append(stack, q)
					}
				}
			}
		}
		bw, bh := x1-x0+1, y1-y0+1
		if bw < 4 || bw > 20 || bh < 8 || bh > 26 || bh < bw {
			continue
		}
		onBorder := 0
		for _, p := range comp {
			px, py := p%w, p/w
			if px == x0 || px == x1 || py == y0 || py == y1 {
				onBorder++
			}
		}
		perimeter := 2*(bw+bh) - 4
		// Hollow: (nearly) all ink on the border, and the border (nearly) all ink.
		if onBorder*10 >= len(comp)*9 && onBorder*10 >= perimeter*9 {
			boxes++
		}
	}
	return boxes
}
