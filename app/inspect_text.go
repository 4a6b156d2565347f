package app

import (
	"fmt"
	"strings"

	"github.com/gatehouse/gatehouse/backend/bundle"
)

// printInspection writes the human form of `skill inspect`.
func printInspection(io IO, in SkillInspection) {
	w := io.Stdout
	status := "valid"
	if !in.Valid {
		status = "INVALID"
	}
	fmt.Fprintf(w, "%s  (%s skill, %s)\n", visibleLine(in.Name), in.Kind, status)
	fmt.Fprintf(w, "  file         %s\n", visibleLine(in.File))
	fmt.Fprintf(w, "  root         %s (%s)\n", visibleLine(in.Root), in.RootOrigin)
	for _, s := range in.Shadowed {
		fmt.Fprintf(w, "  shadows      %s (%s, %s)\n", visibleLine(s.File), s.Kind, s.Root.Origin)
	}
	if d := in.Frontmatter.Description; d != "" {
		fmt.Fprintf(w, "  description  %s\n", oneLine(d, 200))
	}
	if l := in.Frontmatter.License; l != "" {
		fmt.Fprintf(w, "  license      %s\n", oneLine(l, 200))
	}
	if c := in.Frontmatter.Compatibility; c != "" {
		fmt.Fprintf(w, "  compat.      %s\n", oneLine(c, 200))
	}
	if len(in.Frontmatter.AllowedTools) > 0 {
		fmt.Fprintf(w, "  allowed-tools %s (informational; grants nothing in Gatehouse)\n", visibleLine(strings.Join(in.Frontmatter.AllowedTools, " ")))
	}
	for _, u := range in.UnknownFields {
		fmt.Fprintf(w, "  field %-10s %s\n", visibleLine(u.Key), visibleLine(u.Note))
	}
	printIssues(io, "error", in.Errors)
	printIssues(io, "warning", in.Warnings)
	if len(in.Resources) > 0 {
		fmt.Fprintln(w, "\nResources:")
		for _, r := range in.Resources {
			fmt.Fprintf(w, "  %-10s %8d  %s\n", r.Kind, r.Size, visibleLine(r.Path))
		}
	}
	printIssues(io, "resource", in.ResourceIssues)

	ex := in.Execution
	fmt.Fprintln(w, "\nExecution:")
	switch {
	case ex.Available:
		fmt.Fprintln(w, "  available    yes (inspection passed; running still needs consent)")
	case ex.Reason == bundle.ReasonPromptOnly:
		fmt.Fprintln(w, "  available    no — prompt-only skill (no execution.json)")
	case ex.Reason == bundle.ReasonFlat:
		fmt.Fprintln(w, "  available    no — legacy flat skills are never executable")
	default:
		fmt.Fprintf(w, "  available    no — %d issues\n", len(ex.Issues))
	}
	if ex.Revision != "" {
		fmt.Fprintf(w, "  revision     %s\n", ex.Revision)
	}
	if m := ex.Manifest; m != nil {
		fmt.Fprintf(w, "  entrypoint   %s (%s)\n", visibleLine(m.Entrypoint), m.Runtime())
		fmt.Fprintf(w, "  limits       timeout %d ms, output %d bytes\n", m.TimeoutMs, m.MaxOutputBytes)
		fmt.Fprintf(w, "  files        %s\n", visibleLine(strings.Join(m.Files, ", ")))
	}
	for _, u := range ex.Unsupported {
		fmt.Fprintf(w, "  unsupported  %s\n", visibleLine(u))
	}
	printIssues(io, "issue", ex.Issues)
}

func printIssues(io IO, label string, is []bundle.Issue) {
	for _, i := range is {
		fmt.Fprintf(io.Stdout, "  %-8s %s at %s: %s\n", label, visibleLine(i.Code), visibleLine(i.Path), visibleLine(i.Message))
	}
}
