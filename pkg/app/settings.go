package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"

	"github.com/inferscope/inferscope-vllm/pkg/agent"
	"github.com/inferscope/inferscope-vllm/pkg/profilerconfig"
)

// Settings is the app's jsonData.
type Settings struct {
	// ProfilerConfigs is the allow-list of Ascend profiler config files the config page may switch.
	ProfilerConfigs []ProfilerConfig `json:"profilerConfigs"`
	// AllowEditorsToWrite lets Editors switch metric_enable too; only Admins may otherwise.
	AllowEditorsToWrite bool `json:"allowEditorsToWrite"`
	// Agents are the inferscope-agents beside deployments whose disk Grafana does not share.
	Agents []AgentConfig `json:"agents,omitempty"`
	// AgentCACert is the PEM CA that signed the agents' certificates; empty trusts the system's roots.
	AgentCACert string `json:"agentCaCert,omitempty"`
	// AgentClientCert is the app's PEM client certificate for agents that require one (mTLS); its key is the
	// secure field AgentClientKeyField.
	AgentClientCert string `json:"agentClientCert,omitempty"`
}

// AgentConfig is one allow-listed agent, one per deployment. Its token is the secure field AgentTokenField(Name).
type AgentConfig struct {
	Name string `json:"name"`
	// URL is the agent's base URL, https://host:9443.
	URL string `json:"url"`
	// MetricsURL optionally is the deployment's /metrics URL, to show whether vllm_profiling_* is exposed.
	MetricsURL string `json:"metricsUrl,omitempty"`
}

// Secure fields (secureJsonData) of the app's agents.
const (
	agentTokenPrefix    = "agentToken."
	AgentClientKeyField = "agentClientKey"
)

// AgentTokenField is the secureJsonData key of an agent's token.
func AgentTokenField(name string) string { return agentTokenPrefix + name }

// ProfilerConfig is one allow-listed ms_service_profiler_config.json, one per vLLM-Ascend deployment.
type ProfilerConfig struct {
	// Name identifies the file in resource paths and on the page.
	Name string `json:"name"`
	// Path is the file's absolute path as Grafana sees it (usually on a volume shared with the inference host).
	Path string `json:"path"`
	// MetricsURL optionally is the deployment's /metrics URL, to show whether vllm_profiling_* is exposed.
	MetricsURL string `json:"metricsUrl,omitempty"`
	// OverwriteReadOnly lets the switch replace the file when it has no write permission bit.
	OverwriteReadOnly bool `json:"overwriteReadOnly,omitempty"`
}

// namePattern keeps names usable as one URL path segment without escaping.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// parseSettings reads and validates jsonData; every problem is reported, not only the first.
func parseSettings(raw []byte) (Settings, *profilerconfig.AllowList, error) {
	var s Settings
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &s); err != nil {
			return Settings{}, nil, fmt.Errorf("app settings (jsonData) are not valid: %w", err)
		}
	}
	var errs []error
	seen := map[string]bool{}
	var entries []profilerconfig.Entry
	for i, c := range s.ProfilerConfigs {
		where := fmt.Sprintf("profilerConfigs[%d] (%q)", i, c.Name)
		errs = append(errs, checkName(where, c.Name, "name is used twice", seen)...)
		entry := profilerconfig.Entry{Path: c.Path, OverwriteReadOnly: c.OverwriteReadOnly}
		if _, err := profilerconfig.NewAllowListOf(entry); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
		entries = append(entries, entry)
		errs = append(errs, checkMetricsURL(where, c.MetricsURL)...)
	}
	for i, c := range s.Agents {
		where := fmt.Sprintf("agents[%d] (%q)", i, c.Name)
		errs = append(errs, checkName(where, c.Name, "name is used twice (profiler configs and agents share names)", seen)...)
		if _, err := agent.ParseURL(c.URL); err != nil {
			errs = append(errs, fmt.Errorf("%s: url must be https://host:port (no credentials, no query)", where))
		}
		errs = append(errs, checkMetricsURL(where, c.MetricsURL)...)
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, nil, fmt.Errorf("app settings are not valid: %w", err)
	}
	l, err := profilerconfig.NewAllowListOf(entries...)
	if err != nil {
		return Settings{}, nil, err
	}
	return s, l, nil
}

// checkName reports what is wrong with an allow-list row's name: its pattern, and uniqueness over files and agents
// (seen collects the names).
func checkName(where, name, twice string, seen map[string]bool) []error {
	defer func() { seen[name] = true }()
	switch {
	case !namePattern.MatchString(name):
		return []error{fmt.Errorf("%s: name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", where)}
	case seen[name]:
		return []error{fmt.Errorf("%s: %s", where, twice)}
	}
	return nil
}

// checkMetricsURL reports an optional /metrics URL that is not http(s).
func checkMetricsURL(where, metricsURL string) []error {
	if metricsURL == "" {
		return nil
	}
	if u, err := url.Parse(metricsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return []error{fmt.Errorf("%s: metricsUrl must be an http(s) URL", where)}
	}
	return nil
}

// lookup returns the allow-listed file with this name.
func (s Settings) lookup(name string) (ProfilerConfig, bool) {
	for _, c := range s.ProfilerConfigs {
		if c.Name == name {
			return c, true
		}
	}
	return ProfilerConfig{}, false
}
