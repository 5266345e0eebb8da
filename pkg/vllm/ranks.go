package vllm

import "strings"

// Label names and values with a meaning of their own.
const (
	// PIDLabel is added by prometheus_client's multiprocess mode to gauges without a multiprocess_mode.
	PIDLabel = "pid"
	// APIServerDP is the dp value the Ascend profiler gives metrics recorded in the API-server process.
	APIServerDP = "-1"
	// RankOutputLabel is the label InferScope frames carry the engine / DP rank in for vLLM and Dynamo series.
	RankOutputLabel = "engine"
	// AscendRankOutputLabel is the label Ascend profiler series keep their DP rank in.
	AscendRankOutputLabel = "dp"
	// RayRankLabel is the label Ray Serve tells its vLLM replicas apart by; every replica's engine label is "0".
	RayRankLabel = "ReplicaId"
)

// RankLabel returns the label that carries the engine or DP rank on a sample of this name and the label
// InferScope reports it as: vLLM's engine, the Ascend profiler's dp, Dynamo's dp_rank (reported as engine, since
// Dynamo's dp_rank and vLLM's engine index name the same rank for internal DP), Ray Serve's ReplicaId (reported as
// engine: a Ray Serve replica is one vLLM engine, and every replica says engine="0").
func RankLabel(sampleName string) (source, output string) {
	switch {
	case strings.HasPrefix(sampleName, RayPrefixes[0]) || strings.HasPrefix(sampleName, RayPrefixes[1]):
		return RayRankLabel, RankOutputLabel
	case strings.HasPrefix(sampleName, AscendPrefix):
		return "dp", AscendRankOutputLabel
	case strings.HasPrefix(sampleName, DynamoComponentPrefix):
		return "dp_rank", RankOutputLabel
	case strings.HasPrefix(sampleName, VLLMPrefix):
		return "engine", RankOutputLabel
	}
	return "", ""
}
