package capture

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Each limit of the capture record at its value (recorded in full, not
// truncated) and one past it (truncated, saying which limit). Other tests
// cover the rest: raw output_bytes in TestCaptureOutputBytesLimit; files,
// file_bytes and filesystem_depth in TestCheckpointLimits.

// threeChunks prints a, b and c 300 ms apart: three PTY reads.
const threeChunks = `printf a; sleep 0.3; printf b; sleep 0.3; printf c`

func wantLimitation(t *testing.T, rec *Record, exceeded bool, text string) {
	t.Helper()
	found := slices.ContainsFunc(rec.Limitations, func(l string) bool { return strings.Contains(l, text) })
	if rec.Truncated != exceeded || found != exceeded {
		t.Errorf("truncated %v, %q listed %v (want %v): %v", rec.Truncated, text, found, exceeded, rec.Limitations)
	}
}

func TestBehaviourFramesLimit(t *testing.T) {
	for _, limit := range []int{3, 2} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			sc, opts := shScenario(t, threeChunks, func(m obj) { m["limits"] = obj{"frames": limit} })
			rec := capture(t, sc, opts)
			exceeded := limit < 3
			if len(rec.Frames) != limit || len(rec.RenderedFrames) != limit || output(rec) != "abc"[:limit] {
				t.Fatalf("%d raw frames %q, %d rendered frames", len(rec.Frames), output(rec), len(rec.RenderedFrames))
			}
			wantLimitation(t, rec, exceeded, fmt.Sprintf("raw frames exceeded limits.frames (%d)", limit))
			// a rendered frame is the screen of a recorded raw frame: the
			// output past the raw limit has none, so rendered frames stay
			// within theirs
			if slices.ContainsFunc(rec.Limitations, func(l string) bool { return strings.Contains(l, "rendered frames exceeded") }) {
				t.Errorf("rendered frames said to exceed a limit: %v", rec.Limitations)
			}
		})
	}
}

func TestBehaviourRenderedFramesLimit(t *testing.T) {
	// three raw frames and the screen after a resize between the second
	// and the third: four rendered frames
	for _, limit := range []int{4, 3} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			sc, opts := shScenario(t, threeChunks, func(m obj) {
				m["limits"] = obj{"frames": limit}
				m["events"] = []any{obj{"type": "resize", "at_ms": 450, "columns": 60, "rows": 20}}
			})
			rec := capture(t, sc, opts)
			exceeded := limit < 4
			if len(rec.Frames) != 3 || len(rec.RenderedFrames) != limit || output(rec) != "abc" {
				t.Fatalf("%d raw frames %q, %d rendered frames", len(rec.Frames), output(rec), len(rec.RenderedFrames))
			}
			if f := rec.RenderedFrames[2]; f.Columns != 60 || f.Rows != 20 {
				t.Errorf("rendered frame 2 is %dx%d, want the resize's 60x20", f.Columns, f.Rows)
			}
			wantLimitation(t, rec, exceeded, fmt.Sprintf("rendered frames exceeded limits.frames (%d)", limit))
		})
	}
}

// renderedSize is what a rendered frame costs of the output_bytes budget.
func renderedSize(f RenderedFrame) int {
	n := len(f.SerializedState)
	for _, l := range f.Lines {
		n += len(l)
	}
	return n
}

func TestBehaviourRenderedOutputBytesLimit(t *testing.T) {
	// Rendered frames have their own output_bytes budget: measure what
	// three screens of a 10x2 terminal cost, then capture again with
	// exactly that budget and with one byte less.
	small := func(limit int) func(m obj) {
		return func(m obj) {
			m["terminal"] = obj{"columns": 10, "rows": 2}
			m["limits"] = obj{"output_bytes": limit}
		}
	}
	budget := 0
	t.Run("measure", func(t *testing.T) {
		sc, opts := shScenario(t, threeChunks, small(100000))
		rec := capture(t, sc, opts)
		if len(rec.RenderedFrames) != 3 || rec.Truncated {
			t.Fatalf("%d rendered frames, truncated %v", len(rec.RenderedFrames), rec.Truncated)
		}
		for _, f := range rec.RenderedFrames {
			budget += renderedSize(f)
		}
	})
	if budget == 0 {
		t.FailNow()
	}
	for _, limit := range []int{budget, budget - 1} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			sc, opts := shScenario(t, threeChunks, small(limit))
			rec := capture(t, sc, opts)
			exceeded := limit < budget
			if output(rec) != "abc" || len(rec.RenderedFrames) != map[bool]int{false: 3, true: 2}[exceeded] {
				t.Fatalf("raw %q, %d rendered frames", output(rec), len(rec.RenderedFrames))
			}
			wantLimitation(t, rec, exceeded, fmt.Sprintf("rendered frames exceeded limits.output_bytes (%d bytes)", limit))
			if strings.Contains(strings.Join(rec.Limitations, "\n"), "raw output exceeded") {
				t.Errorf("raw output is within the limit: %v", rec.Limitations)
			}
		})
	}
}

func TestBehaviourProcessesLimit(t *testing.T) {
	// At the limit: /bin/sleep as the root is one process whose sample
	// never changes, so it is sampled exactly once. One past: a shell
	// with a child is at least two samples. Both live 300 ms (scaled): a
	// loaded machine (load average 17) once took no sample at all in
	// that time, which says nothing about the limit, so such a run is
	// made again with the processes living longer (withTimingPrecondition).
	for _, c := range []struct {
		name   string
		edit   func(m obj, sleep string)
		exceed bool
	}{
		{"one process", func(m obj, sleep string) { m["executable"], m["arguments"] = "/bin/sleep", []any{sleep} }, false},
		{"two processes", func(m obj, sleep string) { m["arguments"] = []any{"-c", "/bin/sleep " + sleep + "; exit 0"} }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := withTimingPrecondition(t, func(t *testing.T, scale int) (*Record, string) {
				sleep := fmt.Sprintf("%d.%d", 3*scale/10, 3*scale%10)
				sc, opts := shScenario(t, "", func(m obj) {
					c.edit(m, sleep)
					m["limits"] = obj{"processes": 1}
				})
				rec := capture(t, sc, opts)
				if len(rec.ProcessSamples) == 0 {
					return rec, "no process was sampled while it lived"
				}
				return rec, ""
			})
			if len(rec.ProcessSamples) != 1 {
				t.Fatalf("samples %+v", rec.ProcessSamples)
			}
			wantLimitation(t, rec, c.exceed, "process samples exceeded limits.processes (1)")
		})
	}
}

func TestBehaviourShimEventsAtTheProtocolEventsLimit(t *testing.T) {
	for _, limit := range []int{2, 1} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			sc, opts := shScenario(t, `codex; echo "a=$?"; codex; echo "b=$?"`, func(m obj) {
				m["limits"] = obj{"protocol_events": limit}
				m["command_shims"] = []any{obj{"name": "codex", "routes": []any{shimRoute([]any{}, []any{}, exitWith(3), 2)}}}
			})
			rec := capture(t, sc, opts)
			if o := output(rec); !strings.Contains(o, "a=3\r\nb=3\r\n") || len(shimEvents(t, rec)) != limit {
				t.Errorf("frames %q, shim events %s", o, rec.ShimEvents)
			}
			wantLimitation(t, rec, limit < 2, fmt.Sprintf("shim events exceeded limits.protocol_events (%d)", limit))
		})
	}
}
