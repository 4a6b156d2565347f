package consent

import (
	"context"
	"testing"
	"time"
)

// BenchmarkWaitLateness measures how long after its window closes a Wait
// for an undecided proposal returns, on a clock running 4800 times fast
// (the five-minute window in 62.5 ms of real time, as the e2e builds'
// --test-consent-window does). It reports late-ms per wait; when the
// clock could not signal, a wait re-read it every 250 ms and was late by
// up to that. Run: go test -run '^$' -bench WaitLateness ./backend/consent/
func BenchmarkWaitLateness(b *testing.B) {
	var late time.Duration
	for range b.N {
		c := ScaledClock(SystemClock(), 4800)
		m := NewManager(c)
		run := m.StartRun("agent")
		p, err := m.Propose(Binding{AgentID: "agent", RunID: run, Skill: "s"})
		if err != nil {
			b.Fatal(err)
		}
		got, err := m.Wait(context.Background(), p.ID)
		if err != nil || got.State != Expired {
			b.Fatalf("%s %v", got.State, err)
		}
		late += time.Duration(float64(c.Mono()-Window) / 4800)
	}
	b.ReportMetric(float64(late.Microseconds())/1000/float64(b.N), "late-ms")
}
