package role

import "testing"

// TestDecide: what each combination of evidence makes an endpoint.
func TestDecide(t *testing.T) {
	for _, c := range []struct {
		e    Evidence
		want string
	}{
		{Evidence{}, Unified},
		{Evidence{Prompts: true}, Unified},
		{Evidence{Pulls: true, Holds: true}, Unified}, // no NIXL metrics: whatever else, not disaggregated
		{Evidence{NIXL: true}, Undetermined},
		{Evidence{NIXL: true, Pulls: true}, Decode},
		{Evidence{NIXL: true, Pulls: true, Prompts: true}, Decode}, // failed transfers are computed locally
		{Evidence{NIXL: true, Holds: true}, Prefill},
		{Evidence{NIXL: true, Prompts: true}, Prefill}, // transfers too short for a scrape to see them pending
		{Evidence{NIXL: true, Pulls: true, Holds: true}, Both},
	} {
		if got := Decide(c.e); got != c.want {
			t.Errorf("Decide(%+v) = %s, want %s", c.e, got, c.want)
		}
	}
}
