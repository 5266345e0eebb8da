package sim

import (
	"math"
	"testing"
)

// TestPyFloat pins the number formatting to what prometheus_client prints in real vLLM captures.
func TestPyFloat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0.0"},
		{66, "66.0"},
		{1, "1.0"},
		{0.001, "0.001"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.5e-7, "1.5e-07"},
		{0.4143967628479004, "0.4143967628479004"},
		{20000, "20000.0"},
		{100000, "100000.0"},
		{1048576, "1.048576e+06"},
		{10000000, "1e+07"},
		{6634254336, "6.634254336e+09"},
		{1768264339.8898673, "1.7682643398898673e+09"},
		{1.7181405583e+09, "1.7181405583e+09"},
		{10.950000000000001, "10.950000000000001"},
		{1e16, "1e+16"},
		{-2.5, "-2.5"},
		{-12345678, "-12345678.0"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{math.NaN(), "NaN"},
	}
	for _, c := range cases {
		if got := pyFloat(c.in); got != c.want {
			t.Errorf("pyFloat(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRustFloat pins Dynamo's formatting, as in its fe.log capture.
func TestRustFloat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{299, "299"},
		{0.0022, "0.0022"},
		{69.555781023, "69.555781023"},
		{130000, "130000"},
		{math.Inf(1), "+Inf"},
	}
	for _, c := range cases {
		if got := rustFloat(c.in); got != c.want {
			t.Errorf("rustFloat(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
