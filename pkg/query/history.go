package query

import (
	"github.com/inferscope/inferscope-vllm/pkg/exposition"
	"github.com/inferscope/inferscope-vllm/pkg/history"
)

// HistorySource answers the engine from direct mode's in-memory history store.
type HistorySource struct{ Store *history.Store }

// Endpoints lists the endpoints the store holds.
func (h HistorySource) Endpoints() []string { return h.Store.Endpoints() }

// Names lists an endpoint's sample names.
func (h HistorySource) Names(endpoint string) []string { return h.Store.Names(endpoint) }

// Bounds is the span of history held for an endpoint.
func (h HistorySource) Bounds(endpoint string) (int64, int64, bool) { return h.Store.Bounds(endpoint) }

// Select returns an endpoint's series of one name in [from, to].
func (h HistorySource) Select(endpoint, name string, from, to int64, match func(exposition.Labels) bool, maxPoints int) ([]Series, bool) {
	return h.Store.SelectBounded(endpoint, name, from, to, match, maxPoints)
}

// SelectLatest is Select keeping, of the points before carry, each series' newest
// (history.Store.SelectLatestShared).
func (h HistorySource) SelectLatest(endpoint, name string, from, carry, to int64, filter string, match func(exposition.Labels) bool, maxPoints int) ([]Series, int, bool) {
	return h.Store.SelectLatestShared(endpoint, name, from, carry, to, filter, match, maxPoints)
}

// SelectRates returns an endpoint's series of one name in [from, to] as their rates at steps
// (history.Store.SelectRatesShared).
func (h HistorySource) SelectRates(endpoint, name string, from, to int64, steps []int64, window int64, filter string, match func(exposition.Labels) bool, maxPoints int) ([]Series, int, bool) {
	return h.Store.SelectRatesShared(endpoint, name, from, to, steps, window, filter, match, maxPoints)
}

// SelectLabels lists the labels of an endpoint's series of one name with points in [from, to]
// (history.Store.SelectLabels).
func (h HistorySource) SelectLabels(endpoint, name string, from, to int64, each func(exposition.Labels)) {
	h.Store.SelectLabels(endpoint, name, from, to, each)
}

// Span is Revision and Bounds read together (history.Store.Span).
func (h HistorySource) Span(endpoint string) (uint64, int64, int64, bool) {
	return h.Store.Span(endpoint)
}

// Revision changes when what the store holds of an endpoint's past changes other than by trimming.
func (h HistorySource) Revision(endpoint string) uint64 { return h.Store.Revision(endpoint) }
