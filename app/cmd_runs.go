package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

func runRuns(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "runs", "runs [--limit N] [--json]\n\nThe run history, newest first: every attempt and every refusal, with its envelope.")
	limit := fs.Int("limit", 20, "how many runs to show (1-1000)")
	asJSON := fs.Bool("json", false, "print JSON (records with their envelopes)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 1000 {
		return usageError("--limit must be between 1 and 1000, got %d", *limit)
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		return err
	}
	defer env.Close()
	runs, err := env.DB.Runs(ctx, *limit)
	if err != nil {
		return errorf("database", CategoryIO, "%v", err)
	}
	if runs == nil {
		runs = []store.RunRecord{}
	}
	if *asJSON {
		return writeJSON(io, struct {
			Runs []store.RunRecord `json:"runs"`
		}{runs})
	}
	tw := tabwriter.NewWriter(io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tSKILL\tSTATUS\tMS\tAGENT\tAUTHORIZED BY")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.StartedAt.Local().Format("2006-01-02 15:04:05"), visibleLine(r.Skill), r.Status, r.ElapsedMs, visibleLine(r.Agent), visibleLine(r.AuthorizedBy))
	}
	return tw.Flush()
}

// containmentColumns summarize a recorded envelope's confinement (as the
// launcher reported it) and cleanup for the history table.
func containmentColumns(envelope []byte) (confinement, cleanup string) {
	var e runner.Envelope
	if json.Unmarshal(envelope, &e) != nil {
		return "?", "?"
	}
	confinement, cleanup = "-", "-"
	if c := e.Confinement; c != nil {
		switch {
		case c.Confined() && len(c.NotEnforced) == 0:
			confinement = "confined"
		case len(c.Enforced) == 0:
			confinement = "off"
		default:
			confinement = "partial (not " + strings.Join(c.NotEnforced, ",") + ")"
		}
	}
	if c := e.Cleanup; c != nil {
		cleanup = c.Mechanism
		if !c.Verified {
			cleanup += " (unverified)"
		}
	}
	return confinement, cleanup
}
