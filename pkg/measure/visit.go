package measure

import (
	"fmt"
	"testing"
)

// Visitor has one method per node type, so a node type added to expr.go fails to compile wherever a visitor lacks
// its method; Visit is the one type switch that dispatches to it.
type Visitor[R any] interface {
	Gauge(*Gauge) R
	Rate(*Rate) R
	Div(*Div) R
	Add(*Add) R
	Or(*Or) R
	Quantiles(*Quantiles) R
	Mean(*Mean) R
	Attainment(*Attainment) R
	EngineState(*EngineState) R
	LoRA(*LoRA) R
	PerGPU(*PerGPU) R
	InfoProduct(*InfoProduct) R
	Balance(*Balance) R
	Capacity(*Capacity) R
	Raw(*Raw) R
	PD(*PD) R
}

// Visit calls v's method for n's type; a node type Visit has no case for is refused with Unhandled.
func Visit[R any](n Node, v Visitor[R]) (R, error) {
	switch n := n.(type) {
	case *Gauge:
		return v.Gauge(n), nil
	case *Rate:
		return v.Rate(n), nil
	case *Div:
		return v.Div(n), nil
	case *Add:
		return v.Add(n), nil
	case *Or:
		return v.Or(n), nil
	case *Quantiles:
		return v.Quantiles(n), nil
	case *Mean:
		return v.Mean(n), nil
	case *Attainment:
		return v.Attainment(n), nil
	case *EngineState:
		return v.EngineState(n), nil
	case *LoRA:
		return v.LoRA(n), nil
	case *PerGPU:
		return v.PerGPU(n), nil
	case *InfoProduct:
		return v.InfoProduct(n), nil
	case *Balance:
		return v.Balance(n), nil
	case *Capacity:
		return v.Capacity(n), nil
	case *Raw:
		return v.Raw(n), nil
	case *PD:
		return v.PD(n), nil
	}
	var zero R
	return zero, Unhandled(n)
}

// UnhandledPanics makes Unhandled panic; it is set under go test, and tests of the production error clear it.
var UnhandledPanics = testing.Testing()

// Unhandled is the error of a switch over nodes that has no case for n's type: a programming error, so under go
// test it panics (every test that reaches the switch fails), and in production it is an internal error that names
// the type rather than an answer that silently reads nothing.
func Unhandled(n Node) error {
	err := fmt.Errorf("internal error: no case for measure node type %T", n)
	if UnhandledPanics {
		panic(err)
	}
	return err
}

// shape is what the catalog's readers need to know of one node: the nodes below it, the query fields it reads
// itself, the groupBy values it answers (nil: all) and whether it takes rates over a window.
type shape struct {
	children []Node
	fields   []Field
	groups   []Group
	rates    bool
}

// shapeOf is the shape of a node.
func shapeOf(n Node) shape {
	s, err := Visit[shape](n, shaper{})
	if err != nil {
		// Unhandled has panicked under test; in production the evaluators report the node, so read nothing here.
		return shape{}
	}
	return s
}

// family is FieldFamily where a histogram node names no signal and so reads the query's latency family.
func family(s shape, sig bool) shape {
	if !sig {
		s.fields = append(s.fields, FieldFamily)
	}
	return s
}

// shaper is the Visitor that gives each node's shape.
type shaper struct{}

func (shaper) Gauge(*Gauge) shape { return shape{} }
func (shaper) Rate(*Rate) shape   { return shape{fields: []Field{FieldWindow}, rates: true} }
func (shaper) Div(n *Div) shape   { return shape{children: []Node{n.Num, n.Den}} }
func (shaper) Add(n *Add) shape   { return shape{children: []Node{n.A, n.B}} }
func (shaper) Or(n *Or) shape     { return shape{children: n.Parts} }
func (shaper) Quantiles(n *Quantiles) shape {
	return family(shape{fields: []Field{FieldQuantiles, FieldWindow}, rates: true}, len(n.Signal.Names) > 0)
}
func (shaper) Mean(n *Mean) shape {
	return family(shape{fields: []Field{FieldWindow}, rates: true}, len(n.Signal.Names) > 0)
}
func (shaper) Attainment(n *Attainment) shape {
	return family(shape{fields: []Field{FieldThreshold, FieldWindow}, rates: true}, len(n.Signal.Names) > 0)
}
func (shaper) LoRA(*LoRA) shape { return shape{} }

// EngineState's Serving count remembers a group for the window after its engines last reported.
func (shaper) EngineState(n *EngineState) shape {
	if n.Serving {
		return shape{fields: []Field{FieldWindow}}
	}
	return shape{}
}
func (shaper) PerGPU(*PerGPU) shape {
	return shape{fields: []Field{FieldWindow, FieldPeakTFLOPS, FieldPeakMemoryTBps}, rates: true}
}
func (shaper) InfoProduct(*InfoProduct) shape { return shape{} }
func (shaper) Balance(n *Balance) shape {
	return shape{children: []Node{n.Load, n.Waiting}, fields: []Field{FieldScore}}
}
func (shaper) Capacity(n *Capacity) shape {
	return shape{children: []Node{n.Pool, n.Mean}, fields: []Field{FieldHeadroom}}
}
func (shaper) Raw(*Raw) shape {
	return shape{fields: []Field{FieldMetric, FieldLabels, FieldHistogram, FieldQuantiles, FieldWindow}}
}

// PD's parts are joined per model (or for the fleet): finer groupings report per model.
func (shaper) PD(n *PD) shape {
	if n.Balance() {
		return shape{groups: []Group{GroupModel, GroupFleet}}
	}
	return shape{fields: []Field{FieldQuantiles, FieldWindow}, groups: []Group{GroupModel, GroupFleet}}
}
