package sim

// kvPool is one engine's paged KV cache. vLLM reserves block 0 as a "null block" that is never
// free, so a pool of N blocks has N-1 usable ones; usage and the Ascend free/allocated gauges
// are both computed against that.
type kvPool struct {
	total int // num_gpu_blocks, null block included
	used  int
}

func (p *kvPool) usable() int { return p.total - 1 }

func (p *kvPool) free() int { return p.usable() - p.used }

func (p *kvPool) alloc(n int) bool {
	if n > p.free() {
		return false
	}
	p.used += n
	return true
}

func (p *kvPool) release(n int) { p.used -= n }

// usage is vllm:kv_cache_usage_perc: a 0..1 fraction.
func (p *kvPool) usage() float64 { return float64(p.used) / float64(p.usable()) }

func blocksFor(tokens, blockSize int) int { return (tokens + blockSize - 1) / blockSize }
