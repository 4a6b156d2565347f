package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// EvidenceEntry indexes one Evidence file saved under the data
// directory's evidence/ folder (the file is the record; the index only
// finds it).
type EvidenceEntry struct {
	EvidenceID    string          `json:"evidence_id"`
	PredicateType string          `json:"predicate_type"`
	Operation     string          `json:"operation"`
	Path          string          `json:"path"`
	Size          int64           `json:"size"`
	Summary       json.RawMessage `json:"summary"`
	CreatedAt     time.Time       `json:"created_at"`
	// Shared says the person shared this Evidence with agents (MCP
	// resources and comparisons of every connection). IndexEvidence never
	// changes it; SetEvidenceShared does.
	Shared bool `json:"shared"`
}

// evidenceColumns are the columns scanEvidence reads, in its order.
const evidenceColumns = `evidence_id, predicate_type, operation, path, size, summary, created_at, shared`

// scanEvidence reads one row of evidenceColumns.
func scanEvidence(row interface{ Scan(...any) error }) (EvidenceEntry, error) {
	var e EvidenceEntry
	var summary, at string
	if err := row.Scan(&e.EvidenceID, &e.PredicateType, &e.Operation, &e.Path, &e.Size, &summary, &at, &e.Shared); err != nil {
		return EvidenceEntry{}, err
	}
	e.Summary = json.RawMessage(summary)
	e.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
	return e, nil
}

// IndexEvidence records e, replacing an earlier entry for the same id
// (content-addressed, so the same id is the same content).
func (s *DB) IndexEvidence(ctx context.Context, e EvidenceEntry) error {
	if !json.Valid(e.Summary) {
		return fmt.Errorf("store: index evidence %s: summary is not valid JSON", e.EvidenceID)
	}
	_, err := s.sql.ExecContext(ctx, `INSERT INTO evidence (evidence_id, predicate_type, operation, path, size, summary, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (evidence_id) DO UPDATE SET path = excluded.path, size = excluded.size`,
		e.EvidenceID, e.PredicateType, e.Operation, e.Path, e.Size, string(e.Summary), e.CreatedAt.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("store: index evidence %s: %w", e.EvidenceID, err)
	}
	return nil
}

// ListEvidence returns the newest limit entries, newest first.
func (s *DB) ListEvidence(ctx context.Context, limit int) ([]EvidenceEntry, error) {
	return s.listEvidence(ctx, `SELECT `+evidenceColumns+` FROM evidence ORDER BY created_at DESC, evidence_id LIMIT ?`, limit)
}

// ListSharedEvidence returns the newest limit entries the person shared
// with agents, newest first.
func (s *DB) ListSharedEvidence(ctx context.Context, limit int) ([]EvidenceEntry, error) {
	return s.listEvidence(ctx, `SELECT `+evidenceColumns+` FROM evidence WHERE shared = 1 ORDER BY created_at DESC, evidence_id LIMIT ?`, limit)
}

func (s *DB) listEvidence(ctx context.Context, query string, limit int) ([]EvidenceEntry, error) {
	rows, err := s.sql.QueryContext(ctx, query, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list evidence: %w", err)
	}
	defer rows.Close()
	out := []EvidenceEntry{}
	for rows.Next() {
		e, err := scanEvidence(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list evidence: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// GetEvidence returns the entry of id, or an error wrapping ErrNotFound.
func (s *DB) GetEvidence(ctx context.Context, id string) (EvidenceEntry, error) {
	e, err := scanEvidence(s.sql.QueryRowContext(ctx, `SELECT `+evidenceColumns+` FROM evidence WHERE evidence_id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return EvidenceEntry{}, fmt.Errorf("store: evidence %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return EvidenceEntry{}, fmt.Errorf("store: evidence %s: %w", id, err)
	}
	return e, nil
}

// SetEvidenceShared shares the entry of id with agents, or stops sharing
// it; an unknown id is an error wrapping ErrNotFound and changes nothing.
func (s *DB) SetEvidenceShared(ctx context.Context, id string, shared bool) error {
	res, err := s.sql.ExecContext(ctx, `UPDATE evidence SET shared = ? WHERE evidence_id = ?`, shared, id)
	if err != nil {
		return fmt.Errorf("store: share evidence %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("store: share evidence %s: %w", id, ErrNotFound)
	}
	return nil
}

// DeleteEvidence removes an index entry (the caller deletes the file).
func (s *DB) DeleteEvidence(ctx context.Context, id string) error {
	if _, err := s.sql.ExecContext(ctx, `DELETE FROM evidence WHERE evidence_id = ?`, id); err != nil {
		return fmt.Errorf("store: delete evidence %s: %w", id, err)
	}
	return nil
}
