// Package exposition scrapes and parses Prometheus exposition text (format
// 0.0.4) and OpenMetrics 1.0 text quickly and safely.
//
// Parse turns a body into a Scrape: families in order of first appearance,
// each holding flat samples. Samples join families exactly as expfmt groups
// them: a histogram's _bucket/_sum/_count lines belong to the histogram, a
// summary's _sum/_count to the summary, and every other name is its own
// family (so in text format a "foo_created" gauge is a family of its own).
// In OpenMetrics the spec's suffixes join too: _total and _created for
// counters, _created for histograms and summaries, _gcount/_gsum for gauge
// histograms, _info for info. Scrape.Series and Scrape.FamilyOf find series
// by sample name whichever way the format groups them.
//
// Strings are interned per parse and all samples and labels of a Scrape
// share one backing array each, so a parse costs a few hundred allocations
// however many samples the body holds. A Scrape never references the input,
// so callers may reuse their buffers.
//
// Fetch performs one HTTP scrape: content negotiation, gzip, body-size cap,
// timeout, status check, then Parse.
//
// # Strictness
//
// github.com/prometheus/common/expfmt is the reference: what it rejects for a
// reason that touches data is rejected here too, so a scrape never silently
// loses or invents samples. Parse rejects, with the line number and an
// excerpt:
//   - a missing final newline in text format (the body was cut), and in
//     OpenMetrics a missing "# EOF" or anything after it;
//   - bad label syntax, unknown escapes, invalid UTF-8 in names and label
//     values, the reserved label name __name__, duplicate label names;
//   - values that are not floats (strconv syntax without hex floats and '_'
//     separators), timestamps that are not integer milliseconds (float
//     seconds in OpenMetrics);
//   - a second HELP, TYPE or UNIT line for a family, a TYPE line after
//     samples of its family, unknown types (text accepts expfmt's set, case
//     insensitively; OpenMetrics its own set);
//   - histogram buckets without a float le label, negative bucket counts or
//     _count, le/quantile labels on _sum/_count lines, histogram samples
//     without a suffix, summary samples without a float quantile label
//     (expfmt silently drops the last three);
//   - a sample value not separated from the name or labels by a blank
//     ("foo{}1", which expfmt accepts), a label set holding the metric name
//     anywhere but first ({"name", a="b"} is fine);
//   - in OpenMetrics, comments other than HELP, TYPE, UNIT and EOF.
//
// It is more lenient than expfmt only where no data can change: CRLF line
// endings, and trailing blanks after a value, a timestamp or a TYPE keyword.
// Like expfmt it ignores "# HELP" or "# TYPE" lines that stop after the name
// and treats "#HELP" as "# HELP"; in text format any other comment is free.
//
// Known differences on inputs both accept: samples stay flat, so a repeated
// _sum or _count line gives two samples where expfmt keeps one, a summary
// _count keeps its float value where expfmt truncates it to an unsigned
// integer, help text loses the '\r' of a CRLF line ending, and metadata-only
// families are kept where expfmt drops them. expfmt also mis-groups
// histogram and summary lines that start with '{' (it uses the previous
// line's family type); this package does not.
//
// Families not selected by ParseOptions.Keep are skipped once their metric
// name is read: the rest of their lines is not validated.
package exposition
