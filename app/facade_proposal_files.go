package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/approvals"
	"github.com/gatehouse/gatehouse/backend/consent"
)

// MaxProposalFileText bounds the text of one file ProposalFile returns;
// past it the text is cut (at a character boundary) and marked truncated.
const MaxProposalFileText = 256 << 10

// ApprovalView says how a proposal's revision relates to the revisions of
// its skill the person approved before.
type ApprovalView struct {
	// Status is "new", "same", "changed", or "unknown" (the history could
	// not be read; Error says why).
	Status           string             `json:"status"`
	ApprovedRevision string             `json:"approvedRevision,omitempty"`
	ApprovedAt       *time.Time         `json:"approvedAt,omitempty"`
	Changes          []approvals.Change `json:"changes"`
	Error            string             `json:"error,omitempty"`
}

// approvalView compares the request's frozen snapshot with the approval
// book; the comparison is fixed when the dialog is raised.
func approvalView(ctx context.Context, book *approvals.Book, r *consent.Request) (ApprovalView, approvals.Comparison) {
	snap := r.Execution.Snapshot
	if book == nil || snap == nil {
		return ApprovalView{Status: "unknown", Changes: []approvals.Change{}, Error: "no approval history is kept here"}, approvals.Comparison{}
	}
	c, err := book.Compare(ctx, r.Skill, snap)
	if err != nil {
		return ApprovalView{Status: "unknown", Changes: []approvals.Change{}, Error: err.Error()}, approvals.Comparison{}
	}
	v := ApprovalView{Status: string(c.Status), ApprovedRevision: c.ApprovedRevision, Changes: c.Changes}
	if v.Changes == nil {
		v.Changes = []approvals.Change{}
	}
	if c.Status != approvals.New {
		at := c.ApprovedAt
		v.ApprovedAt = &at
	}
	return v, c
}

// approvalRecorder is the pipeline's OnApproved hook: the revision a
// person approved (in the dialog or at the terminal) becomes the base of
// the next dialog's comparison. A failure to record is a warning; the
// approved run goes on.
func approvalRecorder(env *Env) func(context.Context, *consent.Request) {
	book := approvals.Open(env.DB, nil)
	return func(ctx context.Context, r *consent.Request) {
		if r.Execution.Snapshot == nil {
			return
		}
		if err := book.Record(ctx, r.Skill, r.Execution.Snapshot); err != nil {
			fmt.Fprintf(env.Stderr, "gatehouse: warning: %v\n", err)
		}
	}
}

// ProposalFileArgs names one file of a proposal's frozen snapshot.
type ProposalFileArgs struct {
	ProposalID string `json:"proposalId"`
	Path       string `json:"path"`
}

// FileContent is one revision of a file as the dialog shows it.
type FileContent struct {
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	// Binary is true when the bytes are not UTF-8 text (or hold NUL);
	// Text is then empty.
	Binary bool `json:"binary"`
	// Truncated is true when Text holds only the first
	// MaxProposalFileText bytes.
	Truncated bool   `json:"truncated"`
	Text      string `json:"text"`
}

// ProposalFileResult is one file of the snapshot the run will stage and
// execute, and (when the revision changed since the one the person
// approved) that revision's version of it.
type ProposalFileResult struct {
	Path string `json:"path"`
	// Change is "", "added", "modified" or "removed" relative to the
	// approved revision the dialog compares with.
	Change string `json:"change"`
	// Current is the file in this proposal's snapshot (nil for a removed
	// file).
	Current *FileContent `json:"current"`
	// Previous is the approved revision's file when it was kept; nil
	// otherwise, with PreviousNote saying why.
	Previous     *FileContent `json:"previous"`
	PreviousNote string       `json:"previousNote,omitempty"`
}

// ProposalFile returns one file of a live proposal's frozen snapshot: the
// very bytes the runner stages and verifies for this run, never a read of
// the skill's folder. It is available while the dialog can show the
// proposal (until a minute after its run ended).
func (f *Facade) ProposalFile(a ProposalFileArgs) (ProposalFileResult, error) {
	v, ok := f.proposals.update(a.ProposalID, nil)
	if !ok || v.snap == nil {
		return ProposalFileResult{}, errorf("unknown_proposal", CategoryNotFound, "no proposal %q is shown (it ended more than a minute ago, or never existed)", a.ProposalID)
	}
	out := ProposalFileResult{Path: a.Path}
	data, inSnap := v.snap.Bytes(a.Path)
	if inSnap {
		c := fileContent(data)
		out.Current = &c
	}
	for _, ch := range v.cmp.Changes {
		if ch.Path == a.Path {
			out.Change = ch.Kind
		}
	}
	if !inSnap && out.Change != approvals.Removed {
		return ProposalFileResult{}, errorf("unknown_file", CategoryNotFound, "%q is not a file of this proposal's snapshot", a.Path)
	}
	if out.Change == approvals.Modified || out.Change == approvals.Removed {
		old, had, kept := v.cmp.Before(a.Path)
		switch {
		case had && kept:
			c := fileContent(old)
			out.Previous = &c
		case had:
			out.PreviousNote = fmt.Sprintf("The bytes of the approved revision were not kept (only the latest approved revision's files, up to %d MiB in all, are kept), so only the fact that it changed is known.", approvals.MaxKeptBytes>>20)
		}
	}
	return out, nil
}

// fileContent describes data for display: text up to MaxProposalFileText
// bytes (cut at a character boundary), or binary.
func fileContent(data []byte) FileContent {
	sum := sha256.Sum256(data)
	c := FileContent{Size: len(data), SHA256: "sha256:" + hex.EncodeToString(sum[:])}
	head := data
	if len(head) > MaxProposalFileText {
		head = head[:MaxProposalFileText]
		for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
		c.Truncated = true
	}
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head) {
		c.Binary, c.Truncated = true, false
		return c
	}
	c.Text = string(head)
	return c
}
