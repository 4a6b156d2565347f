package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// RunRecord is one row of the run history: a finished attempt or a
// refusal, with its envelope.
type RunRecord struct {
	AttemptID    string          `json:"attempt_id"`
	RunID        string          `json:"run_id"`
	Skill        string          `json:"skill"`
	Revision     string          `json:"revision"`
	Agent        string          `json:"agent"`
	AuthorizedBy string          `json:"authorized_by"`
	Status       string          `json:"status"`
	Envelope     json.RawMessage `json:"envelope"`
	Stderr       string          `json:"stderr"`
	StartedAt    time.Time       `json:"started_at"`
	FinishedAt   time.Time       `json:"finished_at"`
	ElapsedMs    int64           `json:"elapsed_ms"`
}

// RunEvent is one stored lifecycle event of an attempt.
type RunEvent struct {
	Seq       int64           `json:"seq"`
	RunID     string          `json:"run_id"`
	AttemptID string          `json:"attempt_id"`
	Type      string          `json:"type"`
	At        time.Time       `json:"at"`
	Event     json.RawMessage `json:"event"`
}

// RecordRun appends r to the run history. An attempt is recorded once.
func (s *DB) RecordRun(ctx context.Context, r RunRecord) error {
	if !json.Valid(r.Envelope) {
		return fmt.Errorf("store: record run %s: envelope is not valid JSON", r.AttemptID)
	}
	_, err := s.sql.ExecContext(ctx, `INSERT INTO runs (attempt_id, run_id, skill, revision, agent, authorized_by, status, envelope, stderr, started_at, finished_at, elapsed_ms)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.AttemptID, r.RunID, r.Skill, r.Revision, r.Agent, r.AuthorizedBy, r.Status, string(r.Envelope), r.Stderr,
		r.StartedAt.UTC().Format(time.RFC3339Nano), r.FinishedAt.UTC().Format(time.RFC3339Nano), r.ElapsedMs)
	if err != nil {
		return fmt.Errorf("store: record run %s: %w", r.AttemptID, err)
	}
	return nil
}

// AppendRunEvent stores one lifecycle event.
func (s *DB) AppendRunEvent(ctx context.Context, e RunEvent) error {
	if !json.Valid(e.Event) {
		return fmt.Errorf("store: run event %s: not valid JSON", e.Type)
	}
	_, err := s.sql.ExecContext(ctx, `INSERT INTO run_events (run_id, attempt_id, type, at, event) VALUES (?, ?, ?, ?, ?)`,
		e.RunID, e.AttemptID, e.Type, e.At.UTC().Format(time.RFC3339Nano), string(e.Event))
	if err != nil {
		return fmt.Errorf("store: run event %s: %w", e.Type, err)
	}
	return nil
}

// Runs returns the newest limit runs, newest first.
func (s *DB) Runs(ctx context.Context, limit int) ([]RunRecord, error) {
	rows, err := s.sql.QueryContext(ctx, `SELECT attempt_id, run_id, skill, revision, agent, authorized_by, status, envelope, stderr, started_at, finished_at, elapsed_ms
		FROM runs ORDER BY started_at DESC, attempt_id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: runs: %w", err)
	}
	defer rows.Close()
	var out []RunRecord
	for rows.Next() {
		var r RunRecord
		var env, started, finished string
		if err := rows.Scan(&r.AttemptID, &r.RunID, &r.Skill, &r.Revision, &r.Agent, &r.AuthorizedBy, &r.Status, &env, &r.Stderr, &started, &finished, &r.ElapsedMs); err != nil {
			return nil, fmt.Errorf("store: runs: %w", err)
		}
		r.Envelope = json.RawMessage(env)
		r.StartedAt, _ = time.Parse(time.RFC3339Nano, started)
		r.FinishedAt, _ = time.Parse(time.RFC3339Nano, finished)
		out = append(out, r)
	}
	return out, rows.Err()
}

// RunEvents returns the stored events of one attempt in order, together
// with the run-level events (proposed, decided, consumed: they precede the
// attempt and carry no attempt id) of the attempt's run.
func (s *DB) RunEvents(ctx context.Context, attemptID string) ([]RunEvent, error) {
	rows, err := s.sql.QueryContext(ctx, `SELECT seq, run_id, attempt_id, type, at, event FROM run_events
		WHERE attempt_id = ? OR (attempt_id = '' AND run_id = (SELECT run_id FROM run_events WHERE attempt_id = ? LIMIT 1))
		ORDER BY seq`, attemptID, attemptID)
	if err != nil {
		return nil, fmt.Errorf("store: run events: %w", err)
	}
	return scanRunEvents(rows, "run events")
}

// UnrecordedAttempts returns the stored event of type typ (the runner's
// "staged") of every attempt that has no run-history row: an attempt still
// running, or one whose process died before recording it. Oldest first.
func (s *DB) UnrecordedAttempts(ctx context.Context, typ string) ([]RunEvent, error) {
	rows, err := s.sql.QueryContext(ctx, `SELECT e.seq, e.run_id, e.attempt_id, e.type, e.at, e.event FROM run_events e
		WHERE e.type = ? AND e.attempt_id != ''
		AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.attempt_id = e.attempt_id)
		ORDER BY e.seq`, typ)
	if err != nil {
		return nil, fmt.Errorf("store: unrecorded attempts: %w", err)
	}
	return scanRunEvents(rows, "unrecorded attempts")
}

// scanRunEvents reads every row of a run_events query (seq, run_id,
// attempt_id, type, at, event) and closes rows; what names the query in
// errors.
func scanRunEvents(rows *sql.Rows, what string) ([]RunEvent, error) {
	defer rows.Close()
	var out []RunEvent
	for rows.Next() {
		var e RunEvent
		var at, ev string
		if err := rows.Scan(&e.Seq, &e.RunID, &e.AttemptID, &e.Type, &at, &ev); err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		e.At, _ = time.Parse(time.RFC3339Nano, at)
		e.Event = json.RawMessage(ev)
		out = append(out, e)
	}
	return out, rows.Err()
}
