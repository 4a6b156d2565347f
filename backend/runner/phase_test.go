package runner

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestPhaseTimes shows where the time of a checked run goes, phase by
// phase, from the journal's timestamps (PHASES=1, run by make bench).
func TestPhaseTimes(t *testing.T) {
	if os.Getenv("PHASES") == "" {
		t.Skip()
	}
	_, ex := testBundle(t, "echo.mjs", nil)
	req := request(t, ex, `{"n":1}`)
	testRunner.Run(context.Background(), req)
	events, stop := testJournal.Subscribe(256)
	defer stop()
	for i := 0; i < 20; i++ {
		start := time.Now()
		testRunner.Run(context.Background(), req)
		line := ""
		for len(events) > 0 {
			e := <-events
			line += e.Type + "=" + e.At.Sub(start).Round(100*time.Microsecond).String() + " "
		}
		t.Log(time.Since(start).Round(100*time.Microsecond), line)
	}
}
