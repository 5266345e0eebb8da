// Command gpx_inferscope_app is the backend of the InferScope app plugin.
// Grafana starts it as a child process and talks to it over gRPC (hashicorp go-plugin).
package main

import (
	"os"

	sdkapp "github.com/grafana/grafana-plugin-sdk-go/backend/app"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/inferscope/inferscope-vllm/pkg/app"
)

func main() {
	// Manage blocks until Grafana stops the process; it builds one App per settings version and disposes old ones.
	if err := sdkapp.Manage(app.PluginID, app.NewInstance, sdkapp.ManageOpts{}); err != nil {
		log.DefaultLogger.Error("app backend stopped", "error", err)
		os.Exit(1)
	}
}
