// Package httpjson writes the JSON answers of both plugins' resource handlers, so every resource, error or not,
// has the same shape: a JSON body with its content type, and errors as {"error": "..."}.
package httpjson

import (
	"encoding/json"
	"net/http"
)

// Write answers v as JSON with the given status.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Error answers {"error": msg} with the given status; msg must already be free of secrets.
func Error(w http.ResponseWriter, status int, msg string) {
	Write(w, status, map[string]string{"error": msg})
}
