// Command gpx_inferscope_datasource is the backend of the nested vLLM data source.
// Grafana starts it as a child process and talks to it over gRPC (hashicorp go-plugin).
package main

import (
	"os"

	sdkds "github.com/grafana/grafana-plugin-sdk-go/backend/datasource"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/inferscope/inferscope-vllm/pkg/datasource"
)

func main() {
	// Manage blocks until Grafana stops the process; it builds one instance per data source and settings version.
	if err := sdkds.Manage(datasource.PluginID, datasource.NewInstance, sdkds.ManageOpts{}); err != nil {
		log.DefaultLogger.Error("data source backend stopped", "error", err)
		os.Exit(1)
	}
}
