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
	// DynamoWorkerLabel is the label Dynamo's frontend tells the workers it routes to apart by.
	DynamoWorkerLabel = "worker_id"
	// DynamoWorkerPrefix starts the names of the frontend's per-worker gauges, each labelled by worker_id and dp_rank.
	DynamoWorkerPrefix = "dynamo_frontend_worker_"
)

// RankWorker returns the label that names, on a sample of this name, the worker its rank belongs to, or "". Dynamo's
// frontend reports the DP ranks of every worker behind it and dp_rank repeats across workers, so such a rank is
// reported as "<worker_id>/<dp_rank>".
func RankWorker(sampleName string) string {
	if strings.HasPrefix(sampleName, DynamoWorkerPrefix) {
		return DynamoWorkerLabel
	}
	return ""
}

// RankSeparator joins a worker and its DP rank in a reported rank (see RankWorker).
const RankSeparator = "/"

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
	case strings.HasPrefix(sampleName, DynamoComponentPrefix) || strings.HasPrefix(sampleName, DynamoWorkerPrefix):
		return "dp_rank", RankOutputLabel
	case strings.HasPrefix(sampleName, VLLMPrefix):
		return "engine", RankOutputLabel
	}
	return "", ""
}
