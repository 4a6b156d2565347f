package app

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestServeShuttingDownIs503: a request refused because Gatehouse is
// closing (CategoryUnavailable) reaches a client of the real local API as
// HTTP 503 with its code and category, not as a 400 that would tell the
// client its request was wrong; nothing is run, and a request refused as
// invalid on the same server stays a 400.
func TestServeShuttingDownIs503(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	marker := filepath.Join(work, "ran")

	// Before the close, a bad scenario is the client's fault: 400.
	_, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: `{"approved":true}`})
	if status != http.StatusBadRequest || e.Code != "invalid_scenario" || e.Category != CategoryInvalid {
		t.Fatalf("invalid scenario: HTTP %d %+v, want 400 invalid_scenario", status, e)
	}

	ts.facade.captures.stop() // what the facade's close does first
	_, status, e = apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: uiScenario(work, "touch "+marker, 5000)})
	if status != http.StatusServiceUnavailable || e.Code != "shutting_down" || e.Category != CategoryUnavailable || !e.Error || e.Message == "" {
		t.Fatalf("StartCapture while closing: HTTP %d %+v, want 503 shutting_down/%s", status, e, CategoryUnavailable)
	}
	// The refusal came before anything was started: no capture is
	// registered (a started one would be, until it ends), so none can run.
	ts.facade.captures.mu.Lock()
	n := len(ts.facade.captures.running)
	ts.facade.captures.mu.Unlock()
	if n != 0 {
		t.Errorf("%d captures registered after the refusal", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the refused capture ran")
	}
}
