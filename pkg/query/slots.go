package query

import (
	"context"
	"runtime"

	"github.com/inferscope/inferscope-vllm/pkg/history"
)

// heavySteps is how many steps make an evaluation heavy: a cold panel's hour at a 15 s step is 240, a refresh's new
// steps one or two, the diagnosis's window twenty. A heavy evaluation waits for a slot (heavySlots), and the history
// rates it from decoded points, not from its rate cursors: the same bound.
const heavySteps = history.CursorSteps

// heavySlots admits as many heavy evaluations at once as the process has CPUs, at least 2 and at most 4. Grafana
// sends a dashboard's panels six at a time, and each heavy evaluation holds its working set (a cold fleet overview
// histogram's rates at every step for every bucket series, tens of MiB at 256 endpoints; its points are decoded one
// endpoint at a time, see derive.StepRates): more of them at once than CPUs gain no time, only memory, and past the
// runtime's memory limit (memlimit.go in pkg/datasource) the collector then runs all the time. The cap of 4 keeps
// that memory bounded on large machines too. Lighter evaluations, a warm refresh's new steps, never wait for them.
var heavySlots = make(chan struct{}, min(max(2, runtime.GOMAXPROCS(0)), 4))

// admit waits for a heavy slot if an evaluation of steps steps needs one, and returns its release; a cancelled query
// stops waiting.
func admit(ctx context.Context, steps int) (func(), error) {
	if steps <= heavySteps {
		return func() {}, nil
	}
	select {
	case heavySlots <- struct{}{}:
		return func() { <-heavySlots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
