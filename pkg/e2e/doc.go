// Package e2e holds end-to-end tests: the built plugin executables, started through the protocol harness the way
// Grafana starts them, querying simulated vLLM fleets and real Prometheus servers on loopback.
package e2e
