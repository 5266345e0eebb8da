package packaging

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferscope/inferscope-vllm/pkg/harness"
)

// boxes draws n glyph-sized rectangles (hollow or filled) on a dark background, 12 px apart like a line of text.
func boxes(n int, hollow bool) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 16*n+20, 40))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{24, 27, 31, 255}}, image.Point{}, draw.Src)
	ink := color.RGBA{204, 204, 220, 255}
	for i := 0; i < n; i++ {
		x0, y0, x1, y1 := 10+16*i, 12, 10+16*i+9, 12+12
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				if !hollow || x == x0 || x == x1 || y == y0 || y == y1 {
					img.Set(x, y, ink)
				}
			}
		}
	}
	return img
}

func TestTofuBoxesCountsHollowBoxesOnly(t *testing.T) {
	if got := TofuBoxes(boxes(25, true)); got != 25 {
		t.Errorf("25 hollow boxes: counted %d", got)
	}
	if got := TofuBoxes(boxes(25, false)); got != 0 {
		t.Errorf("25 filled boxes: counted %d", got)
	}
}

// TestCommittedScreenshotsShowTheirCharacters fails on a screenshot rendered without a font for its language: the
// zh-Hans query editor drawn with no CJK font shows every Chinese character as an empty box.
func TestCommittedScreenshotsShowTheirCharacters(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(harness.RepoRoot(t), "src", "img", "screenshots", "*.png"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no screenshots: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if n := TofuBoxes(img); n >= TofuLimit {
			t.Errorf("%s shows %d empty boxes where characters should be: regenerate it with npm run screenshots, which needs a CJK font", filepath.Base(f), n)
		}
	}
}
