package bundle

import (
	"errors"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/internal/contentcache"
)

// Execution is the inspection verdict on a bundle's execution extension.
// Available is true only when the manifest, both schemas, every declared
// file, the imports and the pinned runtime all check out; it is a
// statement about the bytes, never a permission to run them.
type Execution struct {
	Available   bool      `json:"available"`
	Reason      string    `json:"reason,omitempty"`
	Revision    string    `json:"revision,omitempty"`
	Manifest    *Manifest `json:"manifest,omitempty"`
	Issues      []Issue   `json:"issues"`
	Unsupported []string  `json:"unsupported"`
	// ExampleInput is the bundle's example invocation (ExampleInputFile),
	// when it ships one that is a valid input; ExampleInputProblem says why
	// a shipped one is not offered. Inspect leaves them empty (a run does
	// not need them); WithExampleInput fills them.
	ExampleInput        *ExampleInput `json:"exampleInput,omitempty"`
	ExampleInputProblem string        `json:"exampleInputProblem,omitempty"`
	// Snapshot holds the captured bytes when the capture succeeded; the
	// runner stages exactly these bytes.
	Snapshot *artifact.Snapshot `json:"-"`
}

// InspectOptions carries what inspection needs from outside the bundle.
type InspectOptions struct {
	// SkillInvalid, when non-empty, is why the skill document itself is
	// invalid; such a skill is never executable.
	SkillInvalid string
	// Runtime reports whether the pinned Node runtime checks out; nil
	// means no runtime is pinned.
	Runtime func() error
	// Cache, when set, remembers the byte-determined checks by content
	// (see InspectCache).
	Cache *InspectCache
}

// Reasons a bundle is not available, for Execution.Reason.
const (
	ReasonPromptOnly = "prompt_only"
	ReasonFlat       = "legacy_flat_skill"
	ReasonIssues     = "issues"
)

// Inspect checks the execution extension of the folder skill at dir
// without executing anything: it reads execution.json with a safe open,
// parses it strictly, captures SKILL.md, execution.json and every declared
// file into memory, computes the revision, and scans the JavaScript imports.
// A missing execution.json means a prompt-only skill (not an error).
func Inspect(dir string, opts InspectOptions) Execution {
	ex := Execution{Issues: []Issue{}, Unsupported: []string{}}
	if dir == "" {
		ex.Reason = ReasonFlat
		return ex
	}
	raw, err := artifact.ReadFile(dir, ManifestFile, MaxManifestBytes)
	if err != nil {
		var ae *artifact.Error
		if errors.As(err, &ae) && ae.Code == "missing" {
			ex.Reason = ReasonPromptOnly
			return ex
		}
		ex.Reason = ReasonIssues
		ex.Issues = append(ex.Issues, artifactIssue(err, ManifestFile))
		return ex
	}
	ex.Reason = ReasonIssues
	if opts.SkillInvalid != "" {
		ex.Issues = append(ex.Issues, Issue{Code: "invalid_skill", Path: "SKILL.md", Message: "SKILL.md is invalid (" + opts.SkillInvalid + "); an invalid skill is never executable"})
	}
	m, issues, unsupported := opts.Cache.parseManifest(raw)
	if unsupported != nil {
		ex.Unsupported = unsupported
	}
	if m == nil {
		ex.Issues = capIssues(append(ex.Issues, issues...))
		return ex
	}
	ex.Manifest = m
	snap, err := artifact.Capture(dir, m.Files)
	if err != nil {
		ex.Issues = capIssues(append(ex.Issues, artifactIssue(err, "")))
		return ex
	}
	ex.Snapshot, ex.Revision = snap, snap.Revision()
	key := contentcache.Key(ex.Revision, raw)
	content, ok := opts.Cache.get(key)
	if !ok {
		content = contentIssues(snap, m)
		opts.Cache.put(key, content)
	}
	ex.Issues = append(ex.Issues, content...)
	switch {
	case opts.Runtime == nil:
		ex.Issues = append(ex.Issues, Issue{Code: "runtime_unavailable", Path: "runtime", Message: "no Node runtime is pinned; run `gatehouse doctor`"})
	default:
		if err := opts.Runtime(); err != nil {
			ex.Issues = append(ex.Issues, Issue{Code: "runtime_unavailable", Path: "runtime", Message: err.Error()})
		}
	}
	ex.Issues = capIssues(ex.Issues)
	if len(ex.Issues) == 0 {
		ex.Available, ex.Reason = true, ""
	}
	return ex
}

// contentIssues are the checks that depend only on the captured bytes:
// the imports of the declared files and the two schemas.
func contentIssues(snap *artifact.Snapshot, m *Manifest) []Issue {
	files := map[string][]byte{}
	for _, p := range m.Files {
		files[p], _ = snap.Bytes(p)
	}
	is := ScanImports(files, m.Files)
	if _, s := CompileSchema(m.InputSchema, true); len(s) > 0 {
		is = append(is, prefixIssues(s, "$.inputSchema")...)
	}
	if _, s := CompileSchema(m.OutputSchema, false); len(s) > 0 {
		is = append(is, prefixIssues(s, "$.outputSchema")...)
	}
	return is
}

func artifactIssue(err error, fallbackPath string) Issue {
	var ae *artifact.Error
	if errors.As(err, &ae) {
		p := ae.Path
		if p == "" {
			p = fallbackPath
		}
		return Issue{Code: ae.Code, Path: p, Message: ae.Err.Error()}
	}
	return Issue{Code: "capture_failed", Path: fallbackPath, Message: err.Error()}
}

func prefixIssues(is []Issue, prefix string) []Issue {
	out := make([]Issue, len(is))
	for i, x := range is {
		x.Path = prefix + x.Path[1:]
		out[i] = x
	}
	return out
}

func capIssues(is []Issue) []Issue {
	if len(is) > MaxIssues {
		return is[:MaxIssues]
	}
	return is
}
