package compare

import "github.com/gatehouse/gatehouse/backend/evidence"

// DiffItem is one index at which a dimension's observations differ: both
// sides' items (nil when that side has none at Index), their times
// (nil without one) and their JSON paths in their Evidence.
type DiffItem struct {
	Index         int     `json:"index"`
	LeftAtMS      *int64  `json:"left_at_ms"`
	RightAtMS     *int64  `json:"right_at_ms"`
	LeftLocation  *string `json:"left_location"`
	RightLocation *string `json:"right_location"`
	Left          any     `json:"left"`
	Right         any     `json:"right"`
}

// DimensionDiff lists the differing items of one dimension, in index
// order: Total counts them all, Items holds the first ones (at most the
// limit passed to Diffs). LeftCount and RightCount are the observations
// compared on each side.
type DimensionDiff struct {
	Dimension  string     `json:"dimension"`
	LeftCount  int        `json:"left_count"`
	RightCount int        `json:"right_count"`
	Total      int        `json:"total"`
	Items      []DiffItem `json:"items"`
}

// Diffs returns, for every dimension in Dimensions order, the items at
// which left and right differ, index by index, using the observation
// lists and the RFC 8785 equality Compare uses (so the first divergence
// Compare reports is one of them). It checks the captures and their contracts
// as Compare does and fails with the same errors (it has no age limit). The lists say nothing about truncation,
// normalization or residual unknowns: read the dimension statuses from
// Compare's Result. limit bounds the items kept per dimension (at least 1).
func Diffs(left, right *evidence.Envelope, limit int) ([]DimensionDiff, error) {
	if left == nil || right == nil {
		return nil, newError(CodeInvalidRequest, []Issue{{Path: "$", Code: "missing", Message: "both envelopes are required"}})
	}
	limit = max(limit, 1)
	lr, rr, err := readPair(left, right)
	if err != nil {
		return nil, err
	}
	if err := checkContracts(lr, rr); err != nil {
		return nil, err
	}
	return diffRecords(lr, rr, limit), nil
}

// diffRecords is Diffs of two valid records with equal contracts.
func diffRecords(lr, rr *record, limit int) []DimensionDiff {
	lo, ro := lr.observations(), rr.observations()
	out := make([]DimensionDiff, numDims)
	for d := range numDims {
		l, r := lo[d], ro[d]
		dd := DimensionDiff{Dimension: dimNames[d], LeftCount: len(l), RightCount: len(r), Items: []DiffItem{}}
		for i := range max(len(l), len(r)) {
			var li, ri *obs
			if i < len(l) {
				li = &l[i]
			}
			if i < len(r) {
				ri = &r[i]
			}
			if li != nil && ri != nil && li.kind == ri.kind && equalJSON(li.value, ri.value) {
				continue
			}
			dd.Total++
			if len(dd.Items) == limit {
				continue
			}
			it := DiffItem{Index: i}
			if li != nil {
				it.Left, it.LeftLocation = li.value, strOrNil(li.location(ri))
				if li.hasAt {
					at := li.at
					it.LeftAtMS = &at
				}
			}
			if ri != nil {
				it.Right, it.RightLocation = ri.value, strOrNil(ri.location(li))
				if ri.hasAt {
					at := ri.at
					it.RightAtMS = &at
				}
			}
			dd.Items = append(dd.Items, it)
		}
		out[d] = dd
	}
	return out
}
