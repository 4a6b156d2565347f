package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

// statusInterrupted is the run-history status of an attempt whose
// Gatehouse process ended (crash, kill, power loss) before it could record
// the attempt.
const statusInterrupted runner.Status = "interrupted"

// reconcileInterrupted gives every attempt that a dead Gatehouse instance
// staged but never recorded its run-history row, as interrupted: whether
// the script started, finished, or left side effects is unknown, and the
// row says so. Attempts of a live instance (another gatehouse process
// sharing this data directory) are left alone, as are events without an
// instance tag (written before tags existed: their owner cannot be told).
// It returns how many attempts it recorded.
func reconcileInterrupted(ctx context.Context, db *store.DB) (int, error) {
	staged, err := db.UnrecordedAttempts(ctx, runner.EventStaged)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, e := range staged {
		var ev runner.Event
		var detail struct {
			Instance string `json:"instance"`
		}
		if json.Unmarshal(e.Event, &ev) != nil || json.Unmarshal(ev.Detail, &detail) != nil || detail.Instance == "" {
			continue
		}
		if _, ok := proctree.ParseTag(detail.Instance); !ok || !proctree.Stale(detail.Instance) {
			continue
		}
		env := runner.Envelope{Status: statusInterrupted, RunID: e.RunID, AttemptID: e.AttemptID, Revision: ev.Revision,
			Errors: []bundle.Issue{{Code: string(statusInterrupted), Path: "$",
				Message: "Gatehouse stopped during this attempt; whether the script started, finished or changed anything is unknown"}}}
		raw, err := json.Marshal(env)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		err = db.RecordRun(ctx, store.RunRecord{AttemptID: e.AttemptID, RunID: e.RunID, Skill: ev.Skill, Revision: ev.Revision, Agent: ev.Agent,
			AuthorizedBy: "unknown (interrupted before it was recorded)", Status: string(statusInterrupted), Envelope: raw,
			StartedAt: e.At, FinishedAt: e.At})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
