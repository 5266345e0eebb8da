package sim

import (
	"testing"
	"time"
)

// TestSleepCycle checks that a cycling instance sleeps and wakes in turn: engine_sleep_state follows the phase,
// requests reach it only while awake, and every switch is one operation of its kind with the level's duration.
func TestSleepCycle(t *testing.T) {
	f := newTestFleet(t, testConfig(func(c *Config) {
		c.Flavor, c.Engines, c.QPS, c.SleepLevel, c.SleepCycle = FlavorV1, 2, 6, 2, Duration(2*time.Minute)
	}))
	stateAt := func(state string) float64 {
		t.Helper()
		fam := parse(t, render(t, f))["vllm:engine_sleep_state"]
		m := find(fam, map[string]string{"engine": "0", "sleep_state": state})
		if m == nil {
			t.Fatalf("no engine_sleep_state for %s", state)
		}
		return value(m)
	}
	f.Advance(90 * time.Second) // awake
	if stateAt("awake") != 1 || stateAt("discard_all") != 0 {
		t.Fatal("the instance should be awake in its first cycle")
	}
	served := f.engines[0].st.firstTokens + f.engines[1].st.firstTokens
	if served == 0 {
		t.Fatal("an awake instance served nothing")
	}
	f.AdvanceTo(3*time.Minute + 50*time.Second) // the sleep at 2 min is behind, the wake at 4 min ahead
	if stateAt("discard_all") != 1 || stateAt("awake") != 0 {
		t.Fatal("the instance should be asleep at level 2 in its second cycle")
	}
	fams := parse(t, render(t, f))
	dur := fams["vllm:sleep_mode_operation_duration_seconds"]
	if dur == nil {
		t.Fatal("no sleep-mode operation durations")
	}
	sleep := find(dur, map[string]string{"operation": "sleep"})
	if sleep == nil || sleep.GetHistogram().GetSampleCount() != 1 || find(dur, map[string]string{"operation": "wake"}) != nil {
		t.Fatalf("want one sleep and no wake yet, got %v", dur)
	}
	if got := sleep.GetHistogram().GetSampleSum(); got < 0.6 || got > 0.7 {
		t.Errorf("a level-2 sleep took %v s, want about 0.6", got)
	}
	for _, op := range sleepOps {
		if m := find(fams["vllm:sleep_mode_operations_in_flight"], map[string]string{"operation": op}); m == nil || value(m) != 0 {
			t.Errorf("operations in flight for %s: want a series at 0", op)
		}
	}
	f.AdvanceTo(4*time.Minute + 10*time.Second)
	if stateAt("awake") != 1 {
		t.Fatal("the instance should be awake again in its third cycle")
	}
	wake := find(parse(t, render(t, f))["vllm:sleep_mode_operation_duration_seconds"], map[string]string{"operation": "wake"})
	if wake == nil || wake.GetHistogram().GetSampleCount() != 1 || wake.GetHistogram().GetSampleSum() < 11.8 {
		t.Fatalf("want one wake of about 12 s, got %v", wake)
	}
}

// TestSleepCycleNeedsALevel checks the flag's validation.
func TestSleepCycleNeedsALevel(t *testing.T) {
	c := testConfig(func(c *Config) { c.SleepCycle = Duration(time.Minute) })
	if err := c.Validate(); err == nil {
		t.Fatal("a sleep cycle without a sleep level was accepted")
	}
}
