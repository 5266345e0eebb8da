package profilerconfig

// NewAllowList is NewAllowListOf for plain paths.
func NewAllowList(paths ...string) (*AllowList, error) {
	entries := make([]Entry, len(paths))
	for i, p := range paths {
		entries[i] = Entry{Path: p}
	}
	return NewAllowListOf(entries...)
}
