// Package sim simulates a vLLM inference fleet and renders its Prometheus /metrics exactly as
// vLLM (V1, V0), vLLM-Ascend with msServiceProfiler, or NVIDIA Dynamo would, so InferScope can
// be demonstrated and tested on production-shaped data without GPUs.
//
// Fleet is the pure model (step it with Advance, render it with WriteExposition); Server is the
// HTTP layer used by cmd/vllm-sim. See README.md for flags, flavors and scenarios.
package sim
