package store

import (
	"context"
	"encoding/json"
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
	rows, err := s.sql.QueryContext(ctx, `SELECT evidence_id, predicate_type, operation, path, size, summary, created_at
		FROM evidence ORDER BY created_at DESC, evidence_id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list evidence: %w", err)
	}
	defer rows.Close()
	out := []EvidenceEntry{}
	for rows.Next() {
		var e EvidenceEntry
		var summary, at string
		if err := rows.Scan(&e.EvidenceID, &e.PredicateType, &e.Operation, &e.Path, &e.Size, &summary, &at); err != nil {
			return nil, fmt.Errorf("store: list evidence: %w", err)
		}
		e.Summary = json.RawMessage(summary)
		e.CreatedAt, _ = time.Parse(time.RFC3339Nano, at)
		out = append(out, e)
	}
	return out, rows.Err()
}

// DeleteEvidence removes an index entry (the caller deletes the file).
func (s *DB) DeleteEvidence(ctx context.Context, id string) error {
	if _, err := s.sql.ExecContext(ctx, `DELETE FROM evidence WHERE evidence_id = ?`, id); err != nil {
		return fmt.Errorf("store: delete evidence %s: %w", id, err)
	}
	return nil
}
