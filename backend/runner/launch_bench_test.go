package runner

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// BenchmarkLaunchPhases splits the start of a checked attempt: /bin/true
// started directly, with the attempt's namespaces (user, PID, network)
// and cgroup, and through the confinement launcher (the
// native launcher, Landlock, exec) with them; each run is started and
// reaped.
func BenchmarkLaunchPhases(b *testing.B) {
	dir := b.TempDir()
	target, targs := "/bin/true", []string{"/bin/true"}
	if os.Getenv("LAUNCH_NODE") != "" {
		target, targs = testPin.Path, []string{testPin.Path, "-e", "0"}
	}
	cases := []struct {
		name     string
		launcher bool
		spec     proctree.Spec
		ownUser  bool // the launcher makes the user namespace (as attempts do)
	}{
		{"direct", false, proctree.Spec{NoCgroup: true}, false},
		{"cgroup", false, proctree.Spec{}, false},
		{"cgroup+userns", false, proctree.Spec{Unprivileged: true}, false},
		{"cgroup+userns+pidns", false, proctree.Spec{Unprivileged: true, PIDNamespace: true}, false},
		{"cgroup+userns+pidns+netns", false, proctree.Spec{Unprivileged: true, PIDNamespace: true, NetNamespace: true}, false},
		{"launcher/direct", true, proctree.Spec{NoCgroup: true}, false},
		{"launcher/cgroup+userns", true, proctree.Spec{Unprivileged: true}, false},
		{"launcher/cgroup+userns+pidns+netns", true, proctree.Spec{Unprivileged: true, PIDNamespace: true, NetNamespace: true}, false},
		{"launcher-userns/cgroup+pidns+netns", true, proctree.Spec{Unprivileged: true, PIDNamespace: true, NetNamespace: true}, true},
	}
	for _, c := range cases {
		// The launcher checks the network namespace it is told of.
		launch := confine.Request{Settings: confine.Default(), ABILimit: -1, NetNamespace: c.spec.NetNamespace && testSup.NetNamespaceUnavailable() == "",
			ReadOnly: []string{runtimePrefix(testPin.Path)}, ReadWrite: []string{dir}, Path: target, Args: targs, Env: []string{"A=1"},
			UserNamespace: c.ownUser && os.Geteuid() == 0}
		c.spec.OwnUserNamespace = launch.MakesUserNamespace()
		lp, largs, lenv, err := launch.Command()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				p, err := newPipes()
				if err != nil {
					b.Fatal(err)
				}
				spec := c.spec
				spec.Dir = "/"
				spec.Files = []*os.File{p.stdinR, p.stdoutW, p.stderrW, p.progressW, p.reportW}
				if c.launcher {
					spec.Files = launch.Files(spec.Files...)
					spec.Path, spec.Args, spec.Env = lp, largs, lenv
				} else {
					spec.Path, spec.Args, spec.Env = target, targs, []string{"A=1"}
				}
				tree, err := testSup.Start(spec)
				if err != nil {
					b.Fatal(err)
				}
				p.closeChildEnds()
				if c.launcher {
					if _, err := launch.ReadReport(p.reportR); err != nil {
						b.Fatal(err)
					}
				}
				<-tree.Exited()
				tree.Terminate(0)
				p.closeAll()
			}
		})
	}
}
