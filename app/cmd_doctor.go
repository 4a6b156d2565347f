package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/skills"
)

// DoctorCheck is one line of `gatehouse doctor`.
type DoctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, missing, warning, error
	Detail string `json:"detail"`
}

func runDoctor(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "doctor", "doctor [--json]\n\nReports Go, Node, the runtime pin, the data directory, SQLite, process ownership, the renderer snapshot, the renderer helpers alive now and the skill roots.")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	checks := []DoctorCheck{{Name: "go", Status: "ok", Detail: fmt.Sprintf("built with %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)}}
	if p, err := exec.LookPath("node"); err == nil {
		out, _ := exec.CommandContext(ctx, p, "--version").Output()
		checks = append(checks, DoctorCheck{"node on PATH", "ok", fmt.Sprintf("%s %s (used only to pin at first start)", p, strings.TrimSpace(string(out)))})
	} else {
		checks = append(checks, DoctorCheck{"node on PATH", "missing", "install Node.js 20+ or set GATEHOUSE_NODE to an absolute path before first start"})
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		checks = append(checks, DoctorCheck{"data directory", "error", err.Error()})
		return reportDoctor(io, checks, *asJSON, true)
	}
	defer env.Close()
	checks = append(checks, DoctorCheck{"data directory", "ok", env.DataDir + " (mode 0700)"})
	if v, err := env.DB.SQLiteVersion(ctx); err == nil {
		sv, _ := env.DB.SchemaVersion(ctx)
		checks = append(checks, DoctorCheck{"sqlite", "ok", fmt.Sprintf("SQLite %s, WAL, schema version %d, %s", v, sv, env.DB.Path())})
	} else {
		checks = append(checks, DoctorCheck{"sqlite", "error", err.Error()})
	}
	checks = append(checks, pinCheck(env.Pin, env.PinErr, env.RuntimeCheck()))
	checks = append(checks, containmentChecks(ctx, env)...)
	checks = append(checks, rendererSnapshotCheck(env))
	checks = append(checks, rendererChecks()...)
	roots, err := env.Roots(ctx)
	if err != nil {
		checks = append(checks, DoctorCheck{"skill roots", "error", err.Error()})
	} else {
		cat := skills.Discover(roots)
		for _, r := range cat.Roots {
			c := DoctorCheck{"skill root", "ok", fmt.Sprintf("%s (%s): %d skills", r.Path, r.Origin, r.Skills)}
			if r.Error != "" {
				c.Status, c.Detail = "warning", fmt.Sprintf("%s (%s): %s", r.Path, r.Origin, r.Error)
			}
			checks = append(checks, c)
		}
	}
	if entries, err := os.ReadDir(env.RunsDir()); err == nil && len(entries) > 0 {
		checks = append(checks, DoctorCheck{"run staging", "warning", fmt.Sprintf("%d staging entries present", len(entries))})
	}
	return reportDoctor(io, checks, *asJSON, false)
}

func pinCheck(pin *runner.Pin, pinErr error, check func() error) DoctorCheck {
	switch {
	case pinErr != nil:
		return DoctorCheck{"node runtime pin", "missing", pinErr.Error()}
	case pin == nil:
		return DoctorCheck{"node runtime pin", "missing", "nothing pinned"}
	}
	if err := check(); err != nil {
		return DoctorCheck{"node runtime pin", "error", err.Error()}
	}
	return DoctorCheck{"node runtime pin", "ok", fmt.Sprintf("%s %s sha256:%s… pinned %s", pin.Path, pin.Version, pin.SHA256[:16], pin.PinnedAt.Format("2006-01-02 15:04:05Z"))}
}

func reportDoctor(io IO, checks []DoctorCheck, asJSON, failed bool) error {
	if asJSON {
		if err := writeJSON(io, struct {
			Checks []DoctorCheck `json:"checks"`
		}{checks}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(io.Stdout, 0, 4, 2, ' ', 0)
		for _, c := range checks {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Status, c.Name, c.Detail)
		}
		tw.Flush()
	}
	if failed {
		return errorf("doctor_failed", CategoryIO, "doctor could not open the data directory")
	}
	return nil
}
