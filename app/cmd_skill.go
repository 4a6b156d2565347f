package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/skills"
)

const skillUsage = `skill <subcommand>

Subcommands:
  list [--json]                 list every discovered skill and whether its script can run
  inspect PATH|NAME [--json]    inspect one skill (a value containing '/' is a bundle folder)
  run PATH|NAME --input FILE|- [--workspace DIR] [--json]
                                run the script once, after you approve it on this terminal
  roots [list|add DIR|remove DIR] [--json]
                                show or change the skill roots kept in settings
`

func runSkill(ctx context.Context, io IO, args []string) error {
	if handled, err := subcommandHelp(io, "skill", skillUsage, "list, inspect, run or roots", args); handled {
		return err
	}
	switch args[0] {
	case "list":
		return runSkillList(ctx, io, args[1:])
	case "inspect":
		return runSkillInspect(ctx, io, args[1:])
	case "run":
		return runSkillRun(ctx, io, args[1:])
	case "roots":
		return runSkillRoots(ctx, io, args[1:])
	}
	return usageError("skill: unknown subcommand %q (list, inspect, run or roots)", args[0])
}

// SkillSummary is one row of `skill list --json`.
type SkillSummary struct {
	Name        string                 `json:"name"`
	Kind        string                 `json:"kind"`
	Root        string                 `json:"root"`
	RootOrigin  string                 `json:"root_origin"`
	Valid       bool                   `json:"valid"`
	Description string                 `json:"description"`
	Warnings    int                    `json:"warnings"`
	Execution   ExecutionSummary       `json:"execution"`
	Shadowed    []skills.ShadowedSkill `json:"shadowed,omitempty"`
}

// ExecutionSummary is the list view of an inspection verdict.
type ExecutionSummary struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	Revision  string `json:"revision,omitempty"`
	Issues    int    `json:"issues"`
}

// SkillInspection is the output of `skill inspect --json`.
type SkillInspection struct {
	Name           string                 `json:"name"`
	Kind           string                 `json:"kind"`
	Root           string                 `json:"root"`
	RootOrigin     string                 `json:"root_origin"`
	Dir            string                 `json:"dir,omitempty"`
	File           string                 `json:"file"`
	Valid          bool                   `json:"valid"`
	Errors         []bundle.Issue         `json:"errors"`
	Warnings       []bundle.Issue         `json:"warnings"`
	Frontmatter    skills.Frontmatter     `json:"frontmatter"`
	UnknownFields  []skills.UnknownField  `json:"unknown_fields"`
	Resources      []skills.Resource      `json:"resources"`
	ResourceIssues []bundle.Issue         `json:"resource_issues"`
	Shadowed       []skills.ShadowedSkill `json:"shadowed"`
	Execution      bundle.Execution       `json:"execution"`
}

func (e *Env) inspectExecution(s *skills.Skill) bundle.Execution {
	opts := bundle.InspectOptions{Runtime: e.RuntimeCheck(), Cache: &e.inspected}
	if !s.Valid {
		opts.SkillInvalid = s.Errors[0].Message
	}
	if s.Kind != skills.KindFolder {
		return bundle.Inspect("", opts)
	}
	return bundle.Inspect(s.Dir, opts)
}

// inspectAll is inspectExecution of each skill, in order, run on up to
// GOMAXPROCS goroutines: a listing inspects every skill, and each
// inspection is mostly reading and hashing files, which the cores can do
// side by side (the caches and the runtime check are safe for concurrent
// use).
func (e *Env) inspectAll(list []*skills.Skill) []bundle.Execution {
	out := make([]bundle.Execution, len(list))
	workers := min(runtime.GOMAXPROCS(0), len(list))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(list); i = int(next.Add(1)) - 1 {
				out[i] = e.inspectExecution(list[i])
			}
		}()
	}
	wg.Wait()
	return out
}

func (e *Env) discover(ctx context.Context) (*skills.Catalog, error) {
	roots, err := e.Roots(ctx)
	if err != nil {
		return nil, errorf("settings", CategoryIO, "%v", err)
	}
	return skills.DiscoverCached(roots, &e.documents), nil
}

func runSkillList(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "skill list", "skill list [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		return err
	}
	defer env.Close()
	cat, err := env.discover(ctx)
	if err != nil {
		return err
	}
	rows := []SkillSummary{}
	for _, s := range cat.Skills {
		rows = append(rows, summarize(env, s))
	}
	for _, r := range cat.Roots {
		if r.Error != "" {
			fmt.Fprintf(io.Stderr, "gatehouse: skill root %s: %s\n", visibleLine(r.Path), visibleLine(r.Error))
		}
	}
	if *asJSON {
		return writeJSON(io, struct {
			Skills []SkillSummary      `json:"skills"`
			Roots  []skills.RootStatus `json:"roots"`
		}{rows, cat.Roots})
	}
	tw := tabwriter.NewWriter(io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCRIPT\tROOT\tDESCRIPTION")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", visibleLine(r.Name), scriptStatus(r), r.RootOrigin, oneLine(r.Description, 60))
	}
	tw.Flush()
	fmt.Fprintf(io.Stdout, "\n%s from %s. `gatehouse skill inspect NAME` shows one in full.\n", plural(len(rows), "skill"), plural(len(cat.Roots), "root"))
	return nil
}

// summarize is one skill's row in a list.
func summarize(env *Env, s *skills.Skill) SkillSummary {
	ex := env.inspectExecution(s)
	return SkillSummary{
		Name: s.Name, Kind: s.Kind, Root: s.Root.Path, RootOrigin: s.Root.Origin, Valid: s.Valid,
		Description: s.Frontmatter.Description, Warnings: len(s.Warnings), Shadowed: s.Shadowed,
		Execution: ExecutionSummary{Available: ex.Available, Reason: ex.Reason, Revision: ex.Revision, Issues: len(ex.Issues)},
	}
}

func scriptStatus(r SkillSummary) string {
	switch {
	case !r.Valid:
		return "invalid"
	case r.Execution.Available:
		return "available"
	case r.Execution.Reason == bundle.ReasonPromptOnly:
		return "prompt-only"
	case r.Execution.Reason == bundle.ReasonFlat:
		return "prompt-only (flat)"
	}
	return fmt.Sprintf("%d issues", r.Execution.Issues)
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// oneLine is untrusted text s on one line: runs of white space become one
// space, the result is cut to max characters, and hidden characters are
// then made visible (visibleLine), so a cut never splits a marker.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return visibleLine(s)
}

func runSkillInspect(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "skill inspect", "skill inspect PATH|NAME [--json]\n\nA value containing '/' is a bundle folder; otherwise NAME is looked up in the skill roots.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("skill inspect takes exactly one PATH or NAME")
	}
	env, s, err := openSkill(ctx, io, pos[0])
	if err != nil {
		return err
	}
	defer env.Close()
	out := inspection(env, s)
	if *asJSON {
		return writeJSON(io, out)
	}
	printInspection(io, out)
	return nil
}

func inspection(env *Env, s *skills.Skill) SkillInspection {
	res, resIssues := skills.Resources(s)
	shadowed := s.Shadowed
	if shadowed == nil {
		shadowed = []skills.ShadowedSkill{}
	}
	return SkillInspection{
		Name: s.Name, Kind: s.Kind, Root: s.Root.Path, RootOrigin: s.Root.Origin, Dir: s.Dir, File: s.File,
		Valid: s.Valid, Errors: s.Errors, Warnings: s.Warnings, Frontmatter: s.Frontmatter, UnknownFields: s.UnknownFields,
		Resources: res, ResourceIssues: resIssues, Shadowed: shadowed, Execution: bundle.WithExampleInput(s.Dir, env.inspectExecution(s)),
	}
}

func writeJSON(io IO, v any) error {
	enc := json.NewEncoder(io.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runSkillRoots(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "skill roots", "skill roots [list|add DIR|remove DIR] [--json]\n\nSettings roots come after the bundled root; later roots win on a name collision.")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		pos = []string{"list"}
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		return err
	}
	defer env.Close()
	switch {
	case pos[0] == "list" && len(pos) == 1:
	case (pos[0] == "add" || pos[0] == "remove") && len(pos) == 2:
		dir, err := filepath.Abs(pos[1])
		if err != nil {
			return errorf("invalid_root", CategoryInvalid, "%v", err)
		}
		if pos[0] == "add" {
			if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
				return errorf("invalid_root", CategoryInvalid, "%s is not a directory (symlinks are not followed)", dir)
			}
		}
		if err := env.updateRoots(ctx, pos[0], dir); err != nil {
			return err
		}
	default:
		return usageError("skill roots: expected list, add DIR or remove DIR")
	}
	roots, err := env.Roots(ctx)
	if err != nil {
		return errorf("settings", CategoryIO, "%v", err)
	}
	if *asJSON {
		return writeJSON(io, struct {
			Roots []skills.Root `json:"roots"`
		}{roots})
	}
	for i, r := range roots {
		fmt.Fprintf(io.Stdout, "%d  %-9s %s\n", i+1, r.Origin, visibleLine(r.Path))
	}
	return nil
}

// updateRoots adds or removes one settings root atomically.
func (e *Env) updateRoots(ctx context.Context, op, dir string) error {
	return e.DB.Update(ctx, nsApp, keySkillRoots, func(old json.RawMessage, ok bool) (json.RawMessage, error) {
		var roots []string
		if ok {
			if err := json.Unmarshal(old, &roots); err != nil {
				return nil, errorf("settings", CategoryIO, "stored skill roots are unreadable: %v", err)
			}
		}
		idx := -1
		for i, r := range roots {
			if r == dir {
				idx = i
			}
		}
		switch {
		case op == "add" && idx >= 0:
			return nil, errorf("duplicate_root", CategoryInvalid, "%s is already a skill root", dir)
		case op == "add":
			roots = append(roots, dir)
		case idx < 0:
			return nil, errorf("unknown_root", CategoryNotFound, "%s is not a settings skill root", dir)
		default:
			roots = append(roots[:idx], roots[idx+1:]...)
		}
		if roots == nil {
			roots = []string{}
		}
		return json.Marshal(roots)
	})
}
