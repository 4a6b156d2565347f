package app

import (
	"context"
	"flag"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/runner"
)

const securityUsage = `security get [--json] | security set --filesystem workspace|off --network deny|allow

get prints the confinement setting of scripts, what this machine enforces for
it (from the same launcher rules every run uses) and how process trees are
owned. set stores a new setting; both flags are required.`

func runSecurity(ctx context.Context, io IO, args []string) error {
	var fsFlag, netFlag *string
	cmd, err := openVerbCommand(ctx, io, "security", securityUsage, "get or set", args, func(fs *flag.FlagSet) {
		fsFlag = fs.String("filesystem", "", "workspace or off")
		netFlag = fs.String("network", "", "deny or allow")
	})
	if cmd == nil {
		return err
	}
	env := cmd.env
	defer env.Close()
	if len(cmd.pos) != 0 {
		return usageError("expected: gatehouse " + securityUsage)
	}
	switch args[0] {
	case "get":
	case "set":
		if err := env.SetConfinement(ctx, confine.Settings{Filesystem: *fsFlag, Network: *netFlag}); err != nil {
			return err
		}
	default:
		return usageError("expected: gatehouse " + securityUsage)
	}
	v, err := withRunner(ctx, env, func(rn *runner.Runner) (SecurityView, error) { return securityView(ctx, env, rn) })
	if err != nil {
		return errorf("settings", CategoryIO, "%v", err)
	}
	if cmd.asJSON {
		return writeJSON(io, v)
	}
	fmt.Fprintf(io.Stdout, "filesystem   %s\nnetwork      %s\n", v.Confinement.Filesystem, v.Confinement.Network)
	if v.Enforcement != nil {
		fmt.Fprintf(io.Stdout, "enforced     %s\n", v.Enforcement.Summary())
	} else {
		fmt.Fprintf(io.Stdout, "enforced     nothing: runs are refused (%s)\n", v.Unavailable)
	}
	fmt.Fprintf(io.Stdout, "ownership    %s", v.Ownership)
	if v.OwnershipUnverifiable != "" {
		fmt.Fprintf(io.Stdout, " (cleanup not verifiable: %s)", v.OwnershipUnverifiable)
	}
	fmt.Fprintln(io.Stdout)
	return nil
}

// withRunner gives fn a runner over a short-lived supervisor (for
// commands that report what runs would get, without running anything).
func withRunner[T any](ctx context.Context, env *Env, fn func(*runner.Runner) (T, error)) (T, error) {
	var zero T
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		return zero, err
	}
	defer sup.Close()
	rn, err := runner.New(runner.Config{Supervisor: sup, RunsDir: env.RunsDir(), Journal: runner.NewJournal(env.DB, nil), Settings: env.Confinement})
	if err != nil {
		return zero, err
	}
	defer rn.Close()
	return fn(rn)
}

// containmentChecks are the doctor's lines on ownership and confinement:
// the mechanism attempts get, and what the launcher enforced on a real
// probe launch of the pinned runtime under the current setting.
func containmentChecks(ctx context.Context, env *Env) []DoctorCheck {
	out, err := withRunner(ctx, env, func(rn *runner.Runner) ([]DoctorCheck, error) {
		var checks []DoctorCheck
		mech, why := rn.Ownership()
		own := DoctorCheck{"process ownership", "ok", mech + " per attempt; cleanup is verified"}
		if why != "" {
			own.Status, own.Detail = "warning", mech+": cleanup cannot be verified ("+why+")"
		}
		checks = append(checks, own)
		launcher := DoctorCheck{"confinement launcher", "ok", "native (embedded, run from a sealed memory file)"}
		if ok, why := confine.NativeLauncher(); !ok {
			launcher.Detail = "the Gatehouse executable, run again (" + why.Error() + ")"
		}
		checks = append(checks, launcher)
		settings, err := rn.CurrentConfinement(ctx)
		if err != nil {
			return append(checks, DoctorCheck{"confinement", "error", err.Error()}), nil
		}
		c := DoctorCheck{Name: "confinement", Status: "ok"}
		if env.Pin == nil {
			rep, err := rn.Confinement(settings)
			c.Detail = fmt.Sprintf("setting %s/%s; no runtime pinned to probe", settings.Filesystem, settings.Network)
			if err != nil {
				c.Status, c.Detail = "error", err.Error()
			} else {
				c.Detail += "; expected: " + rep.Summary()
			}
			return append(checks, c), nil
		}
		rep, err := rn.Probe(ctx, *env.Pin, settings)
		switch {
		case confine.IsUnavailable(err):
			c.Status, c.Detail = "error", err.Error()+"; runs are refused (confinement_unavailable)"
		case err != nil:
			c.Status, c.Detail = "error", "probe launch failed: "+err.Error()
		default:
			c.Detail = "launcher reported: " + rep.Summary()
			if !rep.Confined() {
				c.Status = "warning"
				c.Detail += " (scripts run with full trust)"
			}
		}
		return append(checks, c), nil
	})
	if err != nil {
		return []DoctorCheck{{"process ownership", "error", err.Error()}}
	}
	return out
}
