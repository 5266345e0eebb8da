package datasource

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
)

// TestLabelValuesTakesOnlyLabelNames: the label parameter ends up in a Prometheus API path, so anything but a
// label name is refused before it gets there.
func TestLabelValuesTakesOnlyLabelNames(t *testing.T) {
	d := instance(t, backend.DataSourceInstanceSettings{UID: "labels",
		JSONData: []byte(`{"mode":"direct","scrapeInterval":"1h","endpoints":[{"url":"http://127.0.0.1:1/metrics"}]}`)})
	for label, want := range map[string]int{
		"model_name": 200, "__name__": 200, "": 400, "../../admin/tsdb/delete_series": 400, "a b": 400, "1x": 400,
	} {
		s := &resourceSender{}
		u := &url.URL{Path: "/label-values", RawQuery: url.Values{"label": {label}}.Encode()}
		if err := d.CallResource(context.Background(), &backend.CallResourceRequest{Method: "GET", Path: "label-values", URL: u.String()}, s); err != nil {
			t.Fatal(err)
		}
		if s.resp.Status != want {
			t.Errorf("label %q: status %d, want %d (%s)", label, s.resp.Status, want, s.resp.Body)
		}
	}
}

func TestListResourcesAreBounded(t *testing.T) {
	many := make([]string, MaxListValues+5)
	for i := range many {
		many[i] = url.PathEscape(string(rune('a'+i%26))) + strconv.Itoa(i)
	}
	if got := nonNil(many); len(got) != MaxListValues {
		t.Fatalf("%d values listed", len(got))
	}
	if got := nonNil(nil); got == nil || len(got) != 0 {
		t.Fatalf("nil list answered as %v", got)
	}
}
