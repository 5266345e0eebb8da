// Package profilerconfig reads and switches metric_enable in vLLM-Ascend's ms_service_profiler_config.json.
//
// It is the only package of the app backend that touches the filesystem, so the plugin validator's code-rules
// findings stay in one small place: every path is first checked against an admin-made allow-list (after
// resolving `..` and symlinks), writes are read-modify-write under an in-process mutex plus an advisory lock
// on a sibling lock file, and the file is replaced atomically (temp file, fsync, rename, directory fsync) so
// the profiler, which hot-reloads the file, never sees half of it.
package profilerconfig
