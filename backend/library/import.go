package library

import (
	"context"
	"encoding/json"

	"github.com/gatehouse/gatehouse/backend/store"
)

// Origins of a library entry, kept in its index summary.
const (
	OriginCaptured = "captured" // made by Gatehouse (a capture, a comparison)
	OriginImported = "imported" // brought in from a file (Import)
)

// Import saves checked Evidence a person brought in from a file named
// name (kept in the summary when not empty). Evidence already in the
// library (the same evidence_id, its file present and verifying as that
// id) is not written again: its entry is returned with present set. An
// entry whose file is gone, or changed, is restored. A Checked that no check made is refused.
func (l *Library) Import(ctx context.Context, c Checked, name string) (entry store.EvidenceEntry, present bool, err error) {
	if c.env == nil {
		return store.EvidenceEntry{}, false, errorf("internal", KindInternal, "refusing to import Evidence that was not verified")
	}
	id := c.res.EvidenceID
	if o, err := l.Open(ctx, id); err == nil {
		return o.Entry, true, nil
	}
	// Not indexed, or indexed but its file is gone or no longer verifies
	// (Open re-verifies, a hash when marked): the import writes the
	// checked bytes, restoring the file.
	summary, err := Summary(c.env, OriginImported, name)
	if err != nil {
		return store.EvidenceEntry{}, false, err
	}
	e, err := l.Save(ctx, store.EvidenceEntry{PredicateType: c.res.PredicateType, Operation: c.env.Operation, Summary: summary}, c)
	return e, false, err
}

// OriginOf is the origin of an index entry: OriginImported when its
// summary says so, OriginCaptured otherwise (entries without an origin
// were made by Gatehouse).
func OriginOf(e store.EvidenceEntry) string {
	var s struct {
		Origin string `json:"origin"`
	}
	_ = json.Unmarshal(e.Summary, &s)
	if s.Origin == OriginImported {
		return OriginImported
	}
	return OriginCaptured
}

// List is the index, newest first, at most limit entries (a database
// error when the store fails).
func (l *Library) List(ctx context.Context, limit int) ([]store.EvidenceEntry, error) {
	list, err := l.db.ListEvidence(ctx, limit)
	if err != nil {
		return nil, errorf("database", KindIO, "%v", err)
	}
	return list, nil
}
