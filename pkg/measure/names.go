package measure

import (
	"reflect"

	"github.com/inferscope/inferscope-vllm/pkg/vllm"
)

// implicitSignals are what the data source reads for nodes it resolves itself, which carry no signal field.
var implicitSignals = map[reflect.Type][]vllm.Signal{
	reflect.TypeFor[*EngineState](): {vllm.EngineSleepState, vllm.EngineHealthy},
	reflect.TypeFor[*LoRA]():        {vllm.LoRAInfo},
}

// Signals returns the signals an entry's outputs read, each once, in order: every vllm.Signal field of their nodes
// (found by reflection, so a new kind of node needs no change here) and implicitSignals.
func (e *Entry) Signals() []vllm.Signal {
	var out []vllm.Signal
	seen := map[string]bool{}
	add := func(s vllm.Signal) {
		if s.ID != "" && !seen[s.ID] {
			seen[s.ID] = true
			out = append(out, s)
		}
	}
	sigType := reflect.TypeFor[vllm.Signal]()
	for _, o := range e.Outputs {
		Walk(o.Node, func(n Node) {
			for _, s := range implicitSignals[reflect.TypeOf(n)] {
				add(s)
			}
			v := reflect.ValueOf(n).Elem()
			if v.Kind() != reflect.Struct {
				return
			}
			for i := 0; i < v.NumField(); i++ {
				switch f := v.Field(i); {
				case f.Type() == sigType:
					add(f.Interface().(vllm.Signal))
				case f.Kind() == reflect.Slice && f.Type().Elem() == sigType:
					for j := 0; j < f.Len(); j++ {
						add(f.Index(j).Interface().(vllm.Signal))
					}
				}
			}
		})
	}
	return out
}
