package lora

import (
	"reflect"
	"testing"
)

// TestCurrent: the series set latest (the largest value) says what runs and waits now; empty lists are no adapters,
// and no series present is no state.
func TestCurrent(t *testing.T) {
	series := []map[string]string{
		{"max_lora": "2", "running_lora_adapters": "a,b", "waiting_lora_adapters": "c"},
		{"max_lora": "2", "running_lora_adapters": "b", "waiting_lora_adapters": ""},
		{"max_lora": "2", "running_lora_adapters": "", "waiting_lora_adapters": "a, c"},
	}
	for _, c := range []struct {
		values []float64
		want   State
	}{
		{[]float64{3, 2, 1}, State{Running: []string{"a", "b"}, Waiting: []string{"c"}, Max: 2}},
		{[]float64{1, 3, 2}, State{Running: []string{"b"}, Max: 2}},
		{[]float64{1, 2, 3}, State{Waiting: []string{"a", "c"}, Max: 2}},
	} {
		if got, ok := Current(series, c.values); !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("values %v: %+v, want %+v", c.values, got, c.want)
		}
	}
	if _, ok := Current(nil, nil); ok {
		t.Error("a state without series")
	}
}
