// Package history keeps a bounded, in-memory time-series history of scraped
// vLLM /metrics endpoints, so the data source can answer any dashboard range
// within the retention without an external TSDB.
//
// # Layout
//
// Every endpoint owns a small series table and a list of blocks. A block holds
// up to blockRows consecutive scrapes ("rows"): one shared timestamp column
// (all samples of a scrape share its time) and, per series, a compressed
// value stream: a delta code while the values are integers (counters and
// histogram buckets: 1 bit if unchanged, 5 bits for a change of up to 4),
// else Gorilla/XOR as in Prometheus's chunkenc. The newest block is the open
// head, in which every series appends to its own small bit stream; when it is
// full it is sealed: all streams are copied into one byte arena indexed by
// series id, about 6 bytes of overhead per series and block. Series that
// vanish and return, or carry their own timestamps, get a row bitmap or a
// timestamp list in that block only.
//
// Series identities (name and labels) are interned store-wide with reference
// counts, so identical label sets on many endpoints share one copy and a
// series' labels are copied only once, on first sight.
//
// # Trimming
//
// Retention and the memory cap both drop whole blocks, oldest first, which is
// amortised O(1) per appended point. Retention is also applied exactly at
// read time: points older than newest-Retention are never returned. When the
// memory cap is exceeded, the store drops the globally oldest block of every
// endpoint in turn until it is under the cap; the block holding an endpoint's
// newest scrape is never dropped. Bounds reports the span actually held.
//
// # Concurrency
//
// Each endpoint has its own RWMutex: Append and MarkDown take it for writing,
// Select and the other readers for reading. Readers share the endpoint's memo
// (memo.go) and rate cursors (cursor.go) under small locks of their own. The
// store-wide map of endpoints and the identity interner have their own
// short-held locks; no lock is held while another endpoint is encoded or
// decoded.
package history
