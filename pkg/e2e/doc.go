// Package e2e holds end-to-end tests: the built plugin executables, started through the protocol harness the way
// Grafana starts them, querying simulated vLLM fleets and real Prometheus servers on loopback.
//
// The longest tests (those that step simulated fleets into Prometheus, Thanos, Cortex or VictoriaMetrics, or watch a
// live fleet for a minute) call t.Parallel: they wait on engines and scrapes as much as they compute, so two at a time
// (go test's -parallel defaults to GOMAXPROCS) shorten the package's wall time. They share no state; each starts its
// own servers on free loopback ports, and an endpoint meant to be down holds its port (refusedAddr).
package e2e
