package store

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

func TestRunHistoryRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"a1", "a2"} {
		r := RunRecord{AttemptID: id, RunID: "r1", Skill: "s", Revision: "sha256:x", Agent: "local", AuthorizedBy: "terminal",
			Status: "succeeded", Envelope: json.RawMessage(`{"status":"succeeded"}`), StartedAt: t0.Add(time.Duration(i) * time.Second),
			FinishedAt: t0.Add(time.Duration(i)*time.Second + 40*time.Millisecond), ElapsedMs: 40}
		if err := db.RecordRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		for _, typ := range []string{"staged", "spawned", "completed"} {
			if err := db.AppendRunEvent(ctx, RunEvent{RunID: "r1", AttemptID: id, Type: typ, At: t0, Event: json.RawMessage(`{"type":"` + typ + `"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.RecordRun(ctx, RunRecord{AttemptID: "a1", Envelope: json.RawMessage(`{}`)}); err == nil {
		t.Fatal("attempt recorded twice")
	}
	if err := db.RecordRun(ctx, RunRecord{AttemptID: "a3", Envelope: json.RawMessage(`{`)}); err == nil {
		t.Fatal("invalid envelope stored")
	}
	db.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(ctx, 10)
	if err != nil || len(runs) != 2 || runs[0].AttemptID != "a2" || !runs[0].StartedAt.Equal(t0.Add(time.Second)) || string(runs[0].Envelope) != `{"status":"succeeded"}` {
		t.Fatalf("runs %+v %v", runs, err)
	}
	evs, err := db.RunEvents(ctx, "a1")
	if err != nil || len(evs) != 3 || evs[0].Type != "staged" || evs[2].Type != "completed" {
		t.Fatalf("events %+v %v", evs, err)
	}
}
