// Package app is the SDK glue of the InferScope app backend: instance lifecycle, health and resource routes.
package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"
	"github.com/grafana/grafana-plugin-sdk-go/build/buildinfo"
)

// PluginID is the app's id in plugin.json.
const PluginID = "inferscope-vllm-app"

var (
	_ backend.CallResourceHandler   = (*App)(nil)
	_ backend.CheckHealthHandler    = (*App)(nil)
	_ instancemgmt.InstanceDisposer = (*App)(nil)
)

// Settings is the app's jsonData.
type Settings struct{}

// App is one instance of the app backend, built per settings version.
type App struct {
	backend.CallResourceHandler
	settings Settings
}

// NewInstance builds an App from the app's instance settings.
func NewInstance(_ context.Context, s backend.AppInstanceSettings) (instancemgmt.Instance, error) {
	var settings Settings
	if len(s.JSONData) > 0 {
		if err := json.Unmarshal(s.JSONData, &settings); err != nil {
			return nil, fmt.Errorf("app settings (jsonData) are not valid JSON: %w", err)
		}
	}
	a := &App{settings: settings}
	mux := http.NewServeMux()
	a.registerRoutes(mux)
	a.CallResourceHandler = httpadapter.New(mux)
	return a, nil
}

// Dispose releases the instance when Grafana changes the settings or shuts down.
func (a *App) Dispose() {}

// CheckHealth reports that the app backend is running and which build it is.
func (a *App) CheckHealth(_ context.Context, _ *backend.CheckHealthRequest) (*backend.CheckHealthResult, error) {
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
