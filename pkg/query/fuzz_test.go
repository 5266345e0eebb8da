package query

import (
	"context"
	"testing"
	"time"
)

// FuzzQuery feeds arbitrary query JSON through parsing and evaluation: every input must either be rejected
// with an error or evaluate without panicking.
func FuzzQuery(f *testing.F) {
	for _, seed := range []string{
		`{"queryType":"kv_cache_usage"}`,
		`{"queryType":"latency","metric":"ttft","quantiles":[0.5,0.99],"groupBy":"fleet"}`,
		`{"queryType":"latency","metric":"timer:vllm_profiling_server:create_chat_completion:duration"}`,
		`{"queryType":"dp_balance","measure":"running_waiting","endpoint":"v1|v0","engine":"0|1"}`,
		`{"queryType":"spec_decode","measure":"per_position","model":"llama.*"}`,
		`{"queryType":"capacity","headroom":0.5,"window":"5m"}`,
		`{"queryType":"raw","metric":"vllm:time_to_first_token_seconds","histogram":"quantiles","labels":{"engine":"0"}}`,
		`{"queryType":"cache","measure":"prefix_hit_rate","groupBy":"model","legendFormat":"{{model_name}}"}`,
		`{"queryType":"throughput","window":"-1s"}`,
		`{"queryType":"latency","quantiles":[1.5]}`,
		`{"queryType":"queue","endpoint":"("}`,
		`{"queryType":42}`, `[]`, `null`, `{`,
	} {
		f.Add([]byte(seed))
	}
	start := int64(1_700_000_000_000)
	fl := newFleet(start)
	eng := &Engine{Source: fl.src, ScrapeInterval: 5 * time.Second}
	req := Request{From: time.UnixMilli(start), To: time.UnixMilli(start + 10*60*1000), Interval: 30 * time.Second}
	f.Fuzz(func(t *testing.T, raw []byte) {
		q, err := Parse(raw)
		if err != nil {
			return
		}
		res, err := eng.Eval(context.Background(), q, req)
		if err != nil {
			return
		}
		_ = Frames(q, res)
	})
}
