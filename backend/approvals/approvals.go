// Package approvals remembers which revisions of each skill a person
// approved, so the consent dialog can say whether the revision it shows is
// new, the same one approved before, or which files changed since the last
// approved one (with that revision's bytes, when they were kept, for a
// diff).
//
// The book is bounded: per skill it keeps the MaxRevisions latest approved
// revisions with their file hashes, and the bytes of the latest one only,
// up to MaxKeptBytes in total (files past the budget are remembered by hash
// alone, and a diff of them says the earlier bytes were not kept).
package approvals

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/store"
)

const (
	// Namespace is the settings namespace the book is stored under (one
	// key per skill name).
	Namespace = "consent.approved_revisions"
	// MaxRevisions is how many approved revisions of one skill are
	// remembered (newest first).
	MaxRevisions = 8
	// MaxKeptBytes bounds the bytes kept of the latest approved revision.
	MaxKeptBytes = 1 << 20
)

// Status says how a revision relates to the approved ones.
type Status string

const (
	// New: no revision of this skill was approved before.
	New Status = "new"
	// Same: this exact revision was approved before.
	Same Status = "same"
	// Changed: another revision was approved; Changes lists what differs
	// from the latest approved one.
	Changed Status = "changed"
)

// Change kinds of a file between the latest approved revision and this one.
const (
	Added    = "added"
	Removed  = "removed"
	Modified = "modified"
)

// Change is one file that differs from the latest approved revision.
type Change struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

// Comparison relates a revision to the approved history of its skill.
type Comparison struct {
	Status Status `json:"status"`
	// ApprovedRevision and ApprovedAt name the approved revision compared
	// against: this one (Same) or the latest approved (Changed).
	ApprovedRevision string    `json:"approvedRevision,omitempty"`
	ApprovedAt       time.Time `json:"approvedAt,omitempty"`
	// Changes lists the files that differ (Changed only), in path order.
	Changes []Change `json:"changes,omitempty"`

	base *entry
}

// Before returns the bytes of path in the revision compared against. ok
// is false when that revision had no such file; kept is false when it had
// it but its bytes were not kept (over MaxKeptBytes, or an older entry).
func (c Comparison) Before(path string) (data []byte, ok, kept bool) {
	if c.base == nil {
		return nil, false, false
	}
	for _, f := range c.base.Files {
		if f.Path == path {
			if !f.Kept {
				return nil, true, false
			}
			return append([]byte(nil), f.Data...), true, true
		}
	}
	return nil, false, false
}

// Store is the part of the settings store the book uses (store.DB).
type Store interface {
	Get(ctx context.Context, namespace, key string) (json.RawMessage, error)
	Update(ctx context.Context, namespace, key string, fn func(old json.RawMessage, ok bool) (json.RawMessage, error)) error
}

// Book is the approval history. It is safe for concurrent use (the store
// serializes updates).
type Book struct {
	db  Store
	now func() time.Time
}

// Open returns the book kept in db. now defaults to time.Now.
func Open(db Store, now func() time.Time) *Book {
	if now == nil {
		now = time.Now
	}
	return &Book{db: db, now: now}
}

type file struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
	Kept   bool   `json:"kept"`
	Data   []byte `json:"data,omitempty"`
}

type entry struct {
	Revision   string    `json:"revision"`
	ApprovedAt time.Time `json:"approvedAt"`
	Files      []file    `json:"files"`
}

type record struct {
	Revisions []entry `json:"revisions"`
}

func load(raw json.RawMessage) (record, error) {
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return record{}, fmt.Errorf("approvals: stored history is not readable: %w", err)
	}
	return r, nil
}

// Record notes that the person approved snap as the newest revision of
// skill. Its bytes are kept up to MaxKeptBytes; older entries keep hashes
// only, and entries past MaxRevisions are dropped.
func (b *Book) Record(ctx context.Context, skill string, snap *artifact.Snapshot) error {
	if snap == nil {
		return errors.New("approvals: no snapshot to record")
	}
	e := entry{Revision: snap.Revision(), ApprovedAt: b.now().UTC()}
	budget := MaxKeptBytes
	for _, p := range snap.Paths() {
		data, _ := snap.Bytes(p)
		sum := sha256.Sum256(data)
		f := file{Path: p, SHA256: hex.EncodeToString(sum[:]), Size: len(data)}
		if len(data) <= budget {
			f.Data, f.Kept = data, true
			budget -= len(data)
		}
		e.Files = append(e.Files, f)
	}
	err := b.db.Update(ctx, Namespace, skill, func(old json.RawMessage, ok bool) (json.RawMessage, error) {
		var r record
		if ok {
			// An unreadable history is replaced rather than blocking the
			// record of a real approval.
			r, _ = load(old)
		}
		kept := []entry{e}
		for _, o := range r.Revisions {
			if o.Revision == e.Revision || len(kept) >= MaxRevisions {
				continue
			}
			for i := range o.Files {
				o.Files[i].Data, o.Files[i].Kept = nil, false
			}
			kept = append(kept, o)
		}
		return json.Marshal(record{Revisions: kept})
	})
	if err != nil {
		return fmt.Errorf("approvals: record %s: %w", skill, err)
	}
	return nil
}

// Compare relates snap to the approved revisions of skill.
func (b *Book) Compare(ctx context.Context, skill string, snap *artifact.Snapshot) (Comparison, error) {
	raw, err := b.db.Get(ctx, Namespace, skill)
	if errors.Is(err, store.ErrNotFound) {
		return Comparison{Status: New}, nil
	}
	if err != nil {
		return Comparison{}, fmt.Errorf("approvals: read %s: %w", skill, err)
	}
	r, err := load(raw)
	if err != nil {
		return Comparison{}, err
	}
	if len(r.Revisions) == 0 {
		return Comparison{Status: New}, nil
	}
	for i := range r.Revisions {
		if e := &r.Revisions[i]; e.Revision == snap.Revision() {
			return Comparison{Status: Same, ApprovedRevision: e.Revision, ApprovedAt: e.ApprovedAt, base: e}, nil
		}
	}
	latest := &r.Revisions[0]
	c := Comparison{Status: Changed, ApprovedRevision: latest.Revision, ApprovedAt: latest.ApprovedAt, base: latest}
	before := map[string]string{}
	for _, f := range latest.Files {
		before[f.Path] = f.SHA256
	}
	for _, p := range snap.Paths() {
		data, _ := snap.Bytes(p)
		sum := sha256.Sum256(data)
		old, ok := before[p]
		switch {
		case !ok:
			c.Changes = append(c.Changes, Change{Path: p, Kind: Added})
		case old != hex.EncodeToString(sum[:]):
			c.Changes = append(c.Changes, Change{Path: p, Kind: Modified})
		}
		delete(before, p)
	}
	for p := range before {
		c.Changes = append(c.Changes, Change{Path: p, Kind: Removed})
	}
	sort.Slice(c.Changes, func(i, j int) bool { return c.Changes[i].Path < c.Changes[j].Path })
	return c, nil
}
