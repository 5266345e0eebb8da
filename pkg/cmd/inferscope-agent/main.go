// Command inferscope-agent runs beside a vLLM or vLLM-Ascend server and lets the InferScope app switch the Ascend
// profiler's metric_enable, check the profiler's symbols file and take torch profiles, over an authenticated HTTPS
// API (see pkg/agent and the README's "Profiler agent" section).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/inferscope/inferscope-vllm/pkg/agent"
)

// TokenEnv is the variable the token may come in when -token-file is not given.
const TokenEnv = "INFERSCOPE_AGENT_TOKEN"

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "inferscope-agent:", err)
		os.Exit(1)
	}
}

type options struct {
	listen, tokenFile, cert, key, clientCA string
	plaintext                              bool
	cfg                                    agent.Config
	maxProfileSeconds                      int
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("inferscope-agent", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", "", "address to listen on, e.g. 0.0.0.0:9443 (required)")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the agent's token (else $"+TokenEnv+"); the agent refuses to start without one")
	fs.StringVar(&o.cert, "tls-cert", "", "PEM certificate the agent serves (required unless -insecure-plaintext)")
	fs.StringVar(&o.key, "tls-key", "", "PEM private key of -tls-cert")
	fs.StringVar(&o.clientCA, "client-ca", "", "PEM CA whose client certificates the agent requires (mTLS); empty accepts any client with the token")
	fs.BoolVar(&o.plaintext, "insecure-plaintext", false, "serve plain HTTP: only on a network nobody else reaches (the docker-compose demo)")
	fs.StringVar(&o.cfg.ProfilerConfig, "profiler-config", os.Getenv("SERVICE_PROF_CONFIG_PATH"), "path of ms_service_profiler_config.json (default $SERVICE_PROF_CONFIG_PATH)")
	fs.BoolVar(&o.cfg.OverwriteReadOnly, "overwrite-read-only", false, "replace the profiler config even when it has no write permission bit")
	fs.StringVar(&o.cfg.Symbols, "symbols", os.Getenv("METRIC_SYMBOLS_PATH"), "path of service_metrics_symbols.yaml (default $METRIC_SYMBOLS_PATH)")
	fs.StringVar(&o.cfg.VLLM, "vllm-url", "http://127.0.0.1:8000", "the local vLLM server's base URL")
	fs.StringVar(&o.cfg.TraceDir, "trace-dir", os.Getenv("VLLM_TORCH_PROFILER_DIR"), "vLLM's VLLM_TORCH_PROFILER_DIR; empty switches torch profiling off")
	fs.IntVar(&o.maxProfileSeconds, "max-profile-seconds", 300, fmt.Sprintf("longest torch profile a caller may ask for (at most %d)", agent.MaxProfileSeconds))
	fs.Float64Var(&o.cfg.Rate, "rate", agent.DefaultRate, "the token holder's requests per second, reads and changes each (callers without the token and /healthz have small budgets of their own per address)")
	fs.IntVar(&o.cfg.Burst, "burst", agent.DefaultBurst, "the token holder's requests allowed at once above -rate, reads and changes each")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.listen == "":
		return o, errors.New("-listen is required")
	case !o.plaintext && (o.cert == "" || o.key == ""):
		return o, errors.New("-tls-cert and -tls-key are required (or -insecure-plaintext on a private network)")
	case o.plaintext && o.clientCA != "":
		return o, errors.New("-client-ca needs TLS")
	case o.maxProfileSeconds < 1 || o.maxProfileSeconds > agent.MaxProfileSeconds:
		return o, fmt.Errorf("-max-profile-seconds must be 1–%d", agent.MaxProfileSeconds)
	}
	o.cfg.MaxProfile = time.Duration(o.maxProfileSeconds) * time.Second
	tok, err := token(o.tokenFile)
	if err != nil {
		return o, err
	}
	o.cfg.Token = tok
	return o, nil
}

// token reads the token from its file, else the environment.
func token(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(TokenEnv)), nil
	}
	b, err := os.ReadFile(file) // #nosec G304 -- the operator names the file on the command line
	if err != nil {
		return "", fmt.Errorf("reading -token-file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

func run(args []string, logTo *os.File) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewJSONHandler(logTo, nil))
	o.cfg.Audit = logger.With("log", "audit")
	srv, err := agent.New(o.cfg)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	if !o.plaintext {
		tc, err := serverTLS(o.cert, o.key, o.clientCA)
		if err != nil {
			_ = ln.Close()
			return err
		}
		ln = tls.NewListener(ln, tc)
	} else {
		logger.Warn("serving plain HTTP: the token crosses the network unencrypted", "listen", ln.Addr().String())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger.Info("inferscope-agent listening", "addr", ln.Addr().String(), "tls", !o.plaintext, "mtls", o.clientCA != "",
		"profiler_config", o.cfg.ProfilerConfig, "symbols", o.cfg.Symbols, "trace_dir", o.cfg.TraceDir, "vllm", o.cfg.VLLM)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var serveErr error
	select {
	case serveErr = <-served:
	case <-ctx.Done():
		logger.Info("inferscope-agent shutting down: draining requests, then stopping a torch profile")
	}
	// Drain the requests under way (a profile start waiting for vLLM among them), bounded; then stop a profile
	// that is running or was starting, bounded too, before the process exits.
	drain, cancel := context.WithTimeout(context.Background(), agent.DrainTimeout)
	defer cancel()
	_ = hs.Shutdown(drain)
	shut, cancelShut := context.WithTimeout(context.Background(), agent.ShutdownTimeout)
	defer cancelShut()
	srv.Shutdown(shut)
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return nil
}

// serverTLS loads the agent's certificate and, for mTLS, the CA its clients' certificates must chain to.
func serverTLS(cert, key, clientCA string) (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("loading the TLS certificate: %w", err)
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}
	if clientCA != "" {
		pem, err := os.ReadFile(clientCA) // #nosec G304 -- the operator names the file on the command line
		if err != nil {
			return nil, fmt.Errorf("reading -client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("-client-ca holds no PEM certificate")
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}
