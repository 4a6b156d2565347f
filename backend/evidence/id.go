package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// canonicalMemo keeps the projection computeID was last given with its
// digest, so that the evidence_id of a second envelope whose projection
// has the same members (their names and bytes, byte for byte) is taken
// from it (same) instead of canonicalizing and hashing a 10 MB result
// again: the evidence_id is a function of those members. seal uses one
// for the envelope it writes and the envelope it parses back from the
// written bytes. A memo refers to the bytes it was given, which must not
// change while it is used (within one seal).
type canonicalMemo struct {
	projection map[string]json.RawMessage
	id         string
	hit        bool // same found the projection it keeps
}

// same is the evidence_id kept for a projection with exactly p's members
// and bytes, or "".
func (m *canonicalMemo) same(p map[string]json.RawMessage) string {
	if m == nil || m.id == "" || len(m.projection) != len(p) {
		return ""
	}
	for k, v := range p {
		if w, ok := m.projection[k]; !ok || !bytes.Equal(v, w) {
			return ""
		}
	}
	m.hit = true
	return m.id
}

// computeID is ComputeID. The projection is the envelope itself, as JSON,
// without evidence_id and with the subject reduced to its identity; its
// digest is hex(SHA-256(JCS(projection))).
//
// The projection's canonical form is written member by member, as RFC
// 8785 defines it for an object: "{", the members sorted by name (every
// name here is ASCII, so byte order is UTF-16 order), each as its
// canonical name, ":" and its canonical value, "," between, "}". Each
// value is canonicalized on its own, one level deep, which refuses
// exactly what canonicalizing the whole projection refuses (a raw
// message that is not one JSON value, or nests too deep, included), and
// the pieces are hashed as they are made, so a large result is neither
// copied into a projection nor scanned twice (json.Valid, then the
// canonicalizer). TestComputeIDIsJCSOfTheProjection checks the digest
// against jcs.Transform of the projection.
func computeID(e *Envelope, memo *canonicalMemo) (string, error) {
	if e == nil {
		return "", errors.New("evidence: compute evidence_id: nil envelope")
	}
	c := *e
	c.EvidenceID = ""
	c.Parameters, c.RawResult, c.NormalizedResult = nil, nil, nil
	c.Limitations, c.Locations, c.EvidenceLinks = strictjson.NonNil(e.Limitations), strictjson.NonNil(e.Locations), strictjson.NonNil(e.EvidenceLinks)
	c.Subject = nil
	raw, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("evidence: compute evidence_id: %w", err)
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("evidence: compute evidence_id: %w", err)
	}
	delete(p, "evidence_id")
	p["parameters"], p["raw_result"], p["normalized_result"] = rawOrNull(e.Parameters), rawOrNull(e.RawResult), rawOrNull(e.NormalizedResult)
	if e.Subject != nil {
		p["subject"], _ = json.Marshal(subjectIdentity{Digest: e.Subject.Digest, Format: e.Subject.Format, Architecture: e.Subject.Architecture})
	}
	keys := make([]string, 0, len(p))
	size := 2
	for k, v := range p {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	if size > maxCanonicalBytes { // what canonicalizing the projection refuses
		return "", fmt.Errorf("evidence: compute evidence_id: JSON of %d bytes is beyond the %d bytes canonicalized", size, maxCanonicalBytes)
	}
	if id := memo.same(p); id != "" {
		return id, nil
	}
	slices.Sort(keys)
	h := sha256.New()
	h.Write([]byte{'{'})
	for i, k := range keys {
		if i > 0 {
			h.Write([]byte{','})
		}
		name, _ := json.Marshal(k) // a string always encodes
		if name, err = canonicalize(name); err != nil {
			return "", fmt.Errorf("evidence: compute evidence_id: %w", err)
		}
		h.Write(name)
		h.Write([]byte{':'})
		if err := canonicalMember(h, p[k]); err != nil {
			return "", fmt.Errorf("evidence: compute evidence_id: %s: %w", k, err)
		}
	}
	h.Write([]byte{'}'})
	id := IDPrefix + hex.EncodeToString(h.Sum(nil))
	if memo != nil && len(p["normalized_result"]) >= spliceMin {
		memo.projection, memo.id = p, id
	}
	return id, nil
}

// canonicalMember writes the RFC 8785 form of raw, a member value of the
// projection (one level deep), to h: a large one (a capture's record) as
// it is made (canonicalizeTo), without a copy of its form.
func canonicalMember(h hash.Hash, raw []byte) error {
	if len(raw) >= spliceMin {
		return canonicalizeTo(h, raw, 1)
	}
	v, err := canonicalizeAt(raw, 1)
	if err == nil {
		h.Write(v)
	}
	return err
}
