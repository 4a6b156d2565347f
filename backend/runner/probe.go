package runner

import (
	"context"
	"os"

	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// Probe launches the pinned runtime (`node --version`) exactly as an
// attempt is launched — the same launcher, namespaces and Landlock rules,
// with an empty temporary folder as workspace, HOME and TMPDIR — and
// returns what the launcher reported it enforced, or why it refused
// (a *confine.UnavailableError). Nothing of a skill runs.
func (r *Runner) Probe(ctx context.Context, pin Pin, settings confine.Settings) (*confine.Report, error) {
	if _, err := r.Confinement(settings); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gatehouse-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sup := r.cfg.Supervisor
	netns := settings.Network == confine.NetworkDeny && sup.NetNamespaceUnavailable() == ""
	launch := confine.Request{
		Settings: settings, ABILimit: -1, NetNamespace: netns, UserNamespace: os.Geteuid() == 0,
		ReadOnly: []string{runtimePrefix(pin.Path)}, ReadWrite: []string{dir},
		Path: pin.Path, Args: []string{pin.Path, "--version"}, Env: environment("probe", dir, dir),
	}
	if r.cfg.LandlockABILimit != nil {
		launch.ABILimit = *r.cfg.LandlockABILimit
	}
	prog, args, env, err := launch.Command()
	if err != nil {
		return nil, err
	}
	p, err := newPipes()
	if err != nil {
		return nil, err
	}
	defer p.closeAll()
	tree, err := sup.Start(proctree.Spec{Path: prog, Args: args, Env: env, Dir: dir,
		Files:        launch.Files(p.stdinR, p.stdoutW, p.stderrW, p.progressW, p.reportW),
		Unprivileged: true, OwnUserNamespace: launch.MakesUserNamespace(), PIDNamespace: r.cfg.Ownership == "", NetNamespace: netns, NoCgroup: r.cfg.Ownership == proctree.MechanismSubreaper})
	if err != nil {
		return nil, err
	}
	p.closeChildEnds()
	rep, rerr := launch.ReadReport(p.reportR)
	tree.Terminate(proctree.Grace)
	select {
	case <-tree.Exited():
	case <-ctx.Done():
	}
	return rep, rerr
}
