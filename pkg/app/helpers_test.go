package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
)

// memLogger keeps every log line so tests can check what was (and was not) logged.
type memLogger struct {
	mu    sync.Mutex
	lines []string
}

func (l *memLogger) add(level, msg string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(level, " ", msg, " ", args))
}

func (l *memLogger) Debug(msg string, args ...any)          { l.add("debug", msg, args...) }
func (l *memLogger) Info(msg string, args ...any)           { l.add("info", msg, args...) }
func (l *memLogger) Warn(msg string, args ...any)           { l.add("warn", msg, args...) }
func (l *memLogger) Error(msg string, args ...any)          { l.add("error", msg, args...) }
func (l *memLogger) With(...any) log.Logger                 { return l }
func (l *memLogger) Level() log.Level                       { return log.Debug }
func (l *memLogger) FromContext(context.Context) log.Logger { return l }

func (l *memLogger) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func user(role string) *backend.User {
	if role == "" {
		return nil
	}
	login := strings.ToLower(role)
	return &backend.User{Login: login, Name: role + " User", Email: login + "@example.com", Role: role}
}

// response is one resource answer with its JSON body decoded.
type response struct {
	status int
	body   map[string]any
	raw    string
}

// call sends a resource request as Grafana would and checks that the answer is JSON.
func call(t *testing.T, a *App, u *backend.User, method, path, body string) response {
	t.Helper()
	var res *backend.CallResourceResponse
	err := a.CallResource(context.Background(), &backend.CallResourceRequest{
		PluginContext: backend.PluginContext{User: u, PluginID: PluginID},
		Path:          path, Method: method, URL: path, Body: []byte(body),
	}, backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error {
		res = r
		return nil
	}))
	if err != nil || res == nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	out := response{status: res.Status, raw: string(res.Body)}
	if ct := strings.Join(res.Headers["Content-Type"], ""); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	if err := json.Unmarshal(res.Body, &out.body); err != nil {
		t.Errorf("%s %s: body is not a JSON object: %s", method, path, res.Body)
	}
	return out
}

// newTestApp builds an App from settings given as a Go value.
func newTestApp(t *testing.T, settings any) (*App, *memLogger) {
	t.Helper()
	return newAppWithSecrets(t, settings, nil)
}

// newAppWithSecrets builds an App from settings and secure settings given as Go values.
func newAppWithSecrets(t *testing.T, settings any, secure map[string]string) (*App, *memLogger) {
	t.Helper()
	b, err := json.Marshal(settings)
	if err != nil {
		t.Fatal(err)
	}
	l := &memLogger{}
	return newApp(b, secure, l), l
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
