package vllm

import "testing"

// TestBuckets125 checks vLLM's build_1_2_5_buckets, e.g. 14 bounds at max_model_len 32768.
func TestBuckets125(t *testing.T) {
	cases := []struct {
		max  int
		want int
		last float64
	}{{100, 7, 100}, {32768, 14, 20000}, {40960, 14, 20000}, {131072, 16, 100000}}
	for _, c := range cases {
		b := Buckets125(c.max)
		if len(b) != c.want || b[len(b)-1] != c.last {
			t.Errorf("Buckets125(%d) = %v, want %d bounds ending at %v", c.max, b, c.want, c.last)
		}
	}
}
