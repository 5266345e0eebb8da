// Command vllm-sim serves the /metrics of a simulated vLLM fleet (vLLM V1/V0, vLLM-Ascend,
// Dynamo) so InferScope's panels and alerts can be shown on production-shaped data without GPUs.
// See pkg/sim/README.md for flags and scenarios.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/inferscope/inferscope-vllm/pkg/sim"
)

func main() {
	cfg, err := sim.ParseArgs(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vllm-sim: %v\nRun vllm-sim -h for the flags.\n", err)
		os.Exit(2)
	}
	logger := log.New(os.Stderr, "vllm-sim: ", log.LstdFlags)
	if cfg.FleetSchedule != "" {
		runFleet(cfg, logger)
		return
	}
	srv, err := sim.NewServer(cfg, logger)
	if err != nil {
		logger.Fatal(err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		logger.Fatal(err)
	}
	logger.Printf("serving %s (%d engines, %.3g req/s, speed x%g) on %s", cfg.Flavor, cfg.Engines, cfg.QPS, cfg.Speed, ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx, ln); err != nil {
		logger.Fatal(err)
	}
}

// runFleet serves a fleet whose size follows -fleet-schedule until interrupted.
func runFleet(cfg sim.Config, logger *log.Logger) {
	sched, err := sim.ParseFleetSchedule(cfg.FleetSchedule)
	if err != nil {
		logger.Fatal(err)
	}
	fleet, err := sim.NewScaledFleet(cfg, sched, cfg.SDFile, logger)
	if err != nil {
		logger.Fatal(err)
	}
	logger.Printf("serving a fleet of %s %s on consecutive ports from %s; http_sd at /sd", cfg.Flavor, cfg.FleetSchedule, cfg.Addr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := fleet.Run(ctx); err != nil {
		logger.Fatal(err)
	}
}
