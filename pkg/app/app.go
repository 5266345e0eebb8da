// Package app is the SDK glue of the InferScope app backend: instance lifecycle, health and resource routes.
package app

import (
	"github.com/inferscope/inferscope-vllm/pkg/egress"

	"context"
	"fmt"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"
	"github.com/grafana/grafana-plugin-sdk-go/build/buildinfo"

	"github.com/inferscope/inferscope-vllm/pkg/profilerconfig"
	"github.com/inferscope/inferscope-vllm/pkg/redact"
)

// PluginID is the app's id in plugin.json.
const PluginID = "inferscope-vllm-app"

var (
	_ backend.CallResourceHandler   = (*App)(nil)
	_ backend.CheckHealthHandler    = (*App)(nil)
	_ instancemgmt.InstanceDisposer = (*App)(nil)
)

// App is one instance of the app backend, built per settings version.
type App struct {
	backend.CallResourceHandler
	settings Settings
	// settingsErr is set for invalid settings: the instance still starts, and every profiler call and the
	// health check say what is wrong, instead of Grafana showing a failed plugin.
	settingsErr error
	files       *profilerconfig.AllowList
	// agents are the clients of the allow-listed agents by name, or why one cannot be called.
	agents map[string]agentClient
	logger log.Logger
	client *http.Client
	// scrub removes every secret of the app's settings from what an agent or a /metrics URL answers, before it
	// is shown or logged.
	scrub *redact.Scrubber
	// reads coalesces, caches and bounds the read-only calls to agents and /metrics URLs.
	reads *readCache
	// downloads bounds the trace downloads held at once.
	downloads chan struct{}
}

// NewInstance builds an App from the app's instance settings. Invalid settings do not fail it (see App).
func NewInstance(_ context.Context, s backend.AppInstanceSettings) (instancemgmt.Instance, error) {
	setMemoryLimit()
	return newApp(s.JSONData, s.DecryptedSecureJSONData, backend.Logger), nil
}

// newApp takes the logger as a parameter so tests can check what is logged.
func newApp(jsonData []byte, secure map[string]string, logger log.Logger) *App {
	a := &App{logger: logger, client: exposureClient(), scrub: redact.NewScrubber(secretValues(secure)...),
		reads: newReadCache(ReadCacheTTL, MaxConcurrentReads), downloads: make(chan struct{}, MaxConcurrentDownloads)}
	a.settings, a.files, a.settingsErr = parseSettings(jsonData)
	if a.settingsErr != nil {
		logger.Error("Invalid app settings", "error", a.settingsErr)
	} else {
		a.agents = agentClients(a.settings, secure)
	}
	mux := http.NewServeMux()
	a.registerRoutes(mux)
	a.CallResourceHandler = httpadapter.New(cleanPaths(mux))
	return a
}

// secretValues are all secure settings' values: every agent token, the client key, and whatever else is stored.
func secretValues(secure map[string]string) []string {
	out := make([]string, 0, len(secure))
	for _, v := range secure {
		out = append(out, v)
	}
	return out
}

// Dispose releases the instance when Grafana changes the settings or shuts down.
func (a *App) Dispose() {}

// CheckHealth reports that the app backend is running and which build it is, or what is wrong with its settings.
func (a *App) CheckHealth(_ context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
	if a.settingsErr != nil {
		return &backend.CheckHealthResult{Status: backend.HealthStatusError, Message: a.settingsErr.Error()}, nil
	}
	return &backend.CheckHealthResult{
		Status:  backend.HealthStatusOk,
		Message: fmt.Sprintf("InferScope app backend %s is running", version()),
	}, nil
}

// version is the plugin version the SDK build stamped into the executable, or "dev" for a plain go build.
func version() string {
	info, err := buildinfo.GetBuildInfo()
	if err != nil || info.Version == "" {
		return "dev"
	}
	return info.Version
}

// exposureClient fetches deployments' /metrics for the profiler page: no credentials, no redirects, and no
// link-local or cloud-metadata addresses (pkg/egress).
func exposureClient() *http.Client {
	policy := egress.Policy{}
	t := http.DefaultTransport.(*http.Transport).Clone()
	policy.ConfigureTransport(t)
	c := &http.Client{Timeout: exposureTimeout, Transport: t}
	policy.ConfigureClient(c)
	return c
}
