package compare

import (
	"github.com/gatehouse/gatehouse/backend/evidence"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

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
	// DifferingFields names the top-level members in which two objects
	// differ under the comparison's mode (members the mode ignores, such
	// as times in behavior mode, are not named); nil unless both sides
	// are objects.
	DifferingFields []string `json:"differing_fields,omitempty"`
}

// DimensionDiff lists the differing items of one dimension, in index
// order: Total counts them all, Items holds the first ones (at most the
// limit passed to Diffs). LeftCount and RightCount are the observations
// compared on each side.
type DimensionDiff struct {
	Dimension  string `json:"dimension"`
	LeftCount  int    `json:"left_count"`
	RightCount int    `json:"right_count"`
	Total      int    `json:"total"`
	// Offset is how many differing items precede Items (a page's start).
	Offset int        `json:"offset"`
	Items  []DiffItem `json:"items"`
}

// Diffs returns, for every dimension in Dimensions order, the exact-mode items at
// which left and right differ, index by index, using the observation
// lists and the RFC 8785 equality Compare uses (so the first divergence
// Compare reports is one of them). It checks the captures and their contracts
// as Compare does and fails with the same errors (it has no age limit). The lists say nothing about truncation,
// normalization or residual unknowns: read the dimension statuses from
// Compare's Result. limit bounds the items kept per dimension (at least 1).
func Diffs(left, right *evidence.Envelope, limit int) ([]DimensionDiff, error) {
	if left == nil || right == nil {
		return nil, newError(CodeInvalidRequest, []Issue{{Issue: strictjson.Issue{Path: "$", Code: "missing", Message: "both envelopes are required"}}})
	}
	lc, rc, err := CheckCaptures(left, right)
	if err != nil {
		return nil, err
	}
	return DiffsCaptures(lc, rc, limit)
}

// DiffsCaptures is Diffs for two captures whose records were already
// verified (NewCapture, CheckCaptures): it reads each record from its
// proof and does not verify it again; a zero Capture is refused
// (CodeInvalidRequest).
func DiffsCaptures(left, right Capture, limit int) ([]DimensionDiff, error) {
	limit = max(limit, 1)
	lr, rr, err := readCaptures(left, right)
	if err != nil {
		return nil, err
	}
	if err := checkContracts(lr, rr); err != nil {
		return nil, err
	}
	return diffDims(dimensionsOf(ModeExact, lr, rr), 0, limit), nil
}

// diffDims lists, per dimension, the differing positions of dims: Total
// counts them all, Items keeps at most limit of them from the offset-th.
func diffDims(dims [numDims]dimObs, offset, limit int) []DimensionDiff {
	out := make([]DimensionDiff, numDims)
	for d := range numDims {
		dd := DimensionDiff{Dimension: dimNames[d], LeftCount: dims[d].n[0], RightCount: dims[d].n[1], Offset: offset, Items: []DiffItem{}}
		for i, p := range dims[d].pairs {
			if p.equal() {
				continue
			}
			dd.Total++
			if dd.Total <= offset || len(dd.Items) == limit {
				continue
			}
			it := DiffItem{Index: i, DifferingFields: p.differingFields()}
			if li := p.l; li != nil {
				it.Left, it.LeftLocation = li.value, strOrNil(li.location(p.r))
				if li.hasAt {
					at := li.at
					it.LeftAtMS = &at
				}
			}
			if ri := p.r; ri != nil {
				it.Right, it.RightLocation = ri.value, strOrNil(ri.location(p.l))
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
