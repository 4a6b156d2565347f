package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/store"
	"golang.org/x/sys/unix"
)

// probe runs probe.mjs with the action and returns what the script saw.
func probe(t *testing.T, r *Runner, in map[string]any) (string, Envelope) {
	t.Helper()
	_, ex := testBundle(t, "probe.mjs", map[string]any{"timeoutMs": 20000})
	b, _ := json.Marshal(in)
	res := r.Run(context.Background(), request(t, ex, string(b)))
	wantStatus(t, res, StatusSucceeded, "")
	var out struct{ Echo string }
	json.Unmarshal(res.Envelope.Output, &out)
	return out.Echo, res.Envelope
}

// Every attack of the issue, from the script's side: with confinement on
// each one fails, with it off each one succeeds (so the test can see the
// difference), and the envelope's enforced list names exactly the
// features the probes found enforced.
func TestConfinementFromTheScriptsSide(t *testing.T) {
	if r := runnerWith(t, "", confinedOn); r == nil {
		t.Fatal("no runner")
	} else if _, err := r.Confinement(confinedOn); err != nil {
		t.Skip("confinement unavailable here:", err)
	}
	dataDir := filepath.Dir(testRunsDir)
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(outside, ".ssh"), 0o700)
	secret := filepath.Join(outside, ".ssh", "id_ed25519")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	// A database the "CLI" may write (not the tests' own history).
	cliDB := filepath.Join(t.TempDir(), store.FileName)
	if db, err := store.Open(cliDB); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}
	// Another attempt's receiver, as it exists while that attempt runs.
	other := filepath.Join(testRunsDir, testSup.Instance().Tag()+".other-attempt")
	os.MkdirAll(filepath.Join(other, "home"), 0o700)
	t.Cleanup(func() { os.RemoveAll(other) })
	mount, _ := cgroupMountAndSelf(t)

	tcp := closingListener(t, "tcp", "127.0.0.1:0")
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	abstract := fmt.Sprintf("gatehouse-test-%d", time.Now().UnixNano())
	closingListener(t, "unix", "@"+abstract)

	probes := []struct {
		name    string
		feature string
		in      map[string]any
	}{
		{"read ~/.ssh outside the workspace", confine.Filesystem, map[string]any{"action": "read", "path": secret}},
		{"write the data directory", confine.Filesystem, map[string]any{"action": "write", "path": filepath.Join(dataDir, "planted")}},
		{"open gatehouse.db for writing", confine.Filesystem, map[string]any{"action": "open-rw", "path": filepath.Join(dataDir, store.FileName)}},
		{"run a CLI that writes gatehouse.db", confine.Filesystem, map[string]any{"action": "exec", "path": "/usr/bin/python3",
			"args": []string{"-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table if not exists backdoor(x)'); c.commit()", cliDB}}},
		{"write another receiver", confine.Filesystem, map[string]any{"action": "write", "path": filepath.Join(other, "home", "planted")}},
		{"write cgroupfs", confine.Filesystem, map[string]any{"action": "write", "path": filepath.Join(mount, "gatehouse", "cgroup.max.descendants"), "data": "max"}},
		{"read /proc/<gatehouse>/environ", confine.Filesystem, map[string]any{"action": "read", "path": fmt.Sprintf("/proc/%d/environ", os.Getpid())}},
		{"connect to a loopback TCP server", confine.TCP, map[string]any{"action": "tcp", "port": tcp.Addr().(*net.TCPAddr).Port}},
		{"send to a loopback UDP socket", confine.UDP, map[string]any{"action": "udp", "port": udp.LocalAddr().(*net.UDPAddr).Port}},
		{"signal Gatehouse", confine.Signals, map[string]any{"action": "signal", "pid": os.Getpid()}},
		{"connect to an abstract unix socket", confine.AbstractUnixSockets, map[string]any{"action": "abstract", "path": abstract}},
	}
	if mount == "" {
		probes = probes[:5]
	}
	for _, conf := range []confine.Settings{confinedOn, confinedOff} {
		r := runnerWith(t, "", conf)
		// Without a PID namespace, so that the script can name Gatehouse's
		// pid at all (inside one, no outside pid exists for it).
		flat := runnerWith(t, proctree.MechanismCgroup, conf)
		for _, p := range probes {
			r := r
			if p.feature == confine.Signals || strings.Contains(p.name, "environ") {
				r = flat
			}
			t.Run(conf.Filesystem+"/"+strings.ReplaceAll(p.name, " ", "_"), func(t *testing.T) {
				if strings.Contains(p.name, "environ") && conf == confinedOff {
					// Unconfined, two other locks hold here: the app is
					// not dumpable (PR_SET_DUMPABLE 0), and, when the app
					// runs as root, the script (an ordinary user in its own
					// user namespace) lacks the capabilities the app holds.
					// So this probe cannot succeed unconfined on a root
					// test machine; it must still fail.
					if d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); d != 0 {
						t.Fatal("the app is dumpable")
					}
					if got, _ := probe(t, r, p.in); got == "ok" {
						t.Fatal("an unconfined script read the app's environment")
					}
					return
				}
				if strings.Contains(p.name, "cgroupfs") && conf == confinedOff {
					b, _ := os.ReadFile(p.in["path"].(string))
					defer os.WriteFile(p.in["path"].(string), b, 0)
				}
				got, env := probe(t, r, p.in)
				rep := env.Confinement
				if rep == nil {
					t.Fatal("no confinement report in the envelope")
				}
				if conf == confinedOn {
					if got == "ok" {
						t.Fatalf("confined script could %s", p.name)
					}
					if !rep.Has(p.feature) {
						t.Fatalf("denied by %s, which the envelope does not list as enforced: %+v", p.feature, rep)
					}
				} else {
					if got != "ok" {
						t.Fatalf("unconfined script could not %s (%s): the test would not see confinement", p.name, got)
					}
					if rep.Has(p.feature) {
						t.Fatalf("%s listed as enforced with confinement off: %+v", p.feature, rep)
					}
				}
				t.Logf("%s: %s", p.name, got)
			})
		}
	}
	os.Remove(filepath.Join(dataDir, "planted"))
}

// The envelope states exactly what the launcher enforced.
func TestConfinementReport(t *testing.T) {
	all := []string{confine.Filesystem, confine.TCP, confine.UDP, confine.Signals, confine.AbstractUnixSockets}
	_, on := probe(t, runnerWith(t, "", confinedOn), map[string]any{"action": "look"})
	_, off := probe(t, runnerWith(t, "", confinedOff), map[string]any{"action": "look"})
	if kernel := confine.KernelABI(); on.Confinement.ABI != min(kernel, 7) && on.Confinement.ABI != kernel {
		t.Errorf("ABI %d, kernel %d", on.Confinement.ABI, kernel)
	}
	if testSup.NetNamespaceUnavailable() == "" && confine.KernelABI() >= 6 {
		if !reflect.DeepEqual(on.Confinement.Enforced, all) || len(on.Confinement.NotEnforced) != 0 {
			t.Errorf("on: %+v", on.Confinement)
		}
	}
	if len(off.Confinement.Enforced) != 0 || !reflect.DeepEqual(off.Confinement.NotEnforced, all) {
		t.Errorf("off: %+v", off.Confinement)
	}
	b, _ := json.Marshal(on)
	if !strings.Contains(string(b), `"confinement":{"filesystem":"workspace","network":"deny","abi":`) {
		t.Errorf("envelope %s", b)
	}
}

// A kernel without Landlock (simulated) refuses a confined run as
// confinement_unavailable, runs the explicit "off" choice and never says
// "confined"; network "deny" is still met there by the network namespace.
func TestNoLandlockIsRefusedNotDowngraded(t *testing.T) {
	zero := 0
	mk := func(c confine.Settings) *Runner {
		r, err := New(Config{Supervisor: testSup, RunsDir: testRunsDir, Journal: testJournal, History: testDB, Confinement: c, LandlockABILimit: &zero})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	_, ex := testBundle(t, "probe.mjs", nil)
	consumed := false
	req := request(t, ex, `{"action":"look"}`)
	req.Authorize = func(context.Context) error { consumed = true; return nil }
	res := mk(confinedOn).Run(context.Background(), req)
	wantStatus(t, res, StatusRefused, confine.CodeUnavailable)
	if consumed || res.Envelope.Confinement != nil {
		t.Fatalf("refused run consumed consent or claims confinement: %v %+v", consumed, res.Envelope.Confinement)
	}
	got, env := probe(t, mk(confinedOff), map[string]any{"action": "look"})
	if env.Confinement.Confined() || env.Confinement.ABI != 0 || len(env.Confinement.Enforced) != 0 || got != "" {
		t.Fatalf("off on a kernel without Landlock: %+v (%q)", env.Confinement, got)
	}
	if testSup.NetNamespaceUnavailable() == "" {
		_, env = probe(t, mk(confine.Settings{Filesystem: confine.FilesystemOff, Network: confine.NetworkDeny}), map[string]any{"action": "look"})
		if env.Confinement.Confined() || !env.Confinement.Has(confine.TCP) || !env.Confinement.Has(confine.UDP) || env.Confinement.Has(confine.Filesystem) {
			t.Fatalf("network-only confinement: %+v", env.Confinement)
		}
	}
	// The launcher itself refuses too, if asked directly for what the
	// kernel cannot do (the up-front check is not the only guard).
	launch := confine.Request{Settings: confinedOn, ABILimit: 0, Path: testPin.Path, Args: []string{testPin.Path, "-e", "0"}}
	if _, err := startLaunch(t, launch); !confine.IsUnavailable(err) {
		t.Fatalf("launcher without Landlock: %v", err)
	}
}

// startLaunch runs a bare launch through the supervisor and returns the
// launcher's report.
func startLaunch(t *testing.T, req confine.Request) (*confine.Report, error) {
	t.Helper()
	prog, args, env, err := req.Command()
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPipes()
	if err != nil {
		t.Fatal(err)
	}
	defer p.closeAll()
	tree, err := testSup.Start(proctree.Spec{Path: prog, Args: args, Env: env, Dir: "/",
		Files: req.Files(p.stdinR, p.stdoutW, p.stderrW, p.progressW, p.reportW), Unprivileged: true, PIDNamespace: true})
	if err != nil {
		t.Fatal(err)
	}
	p.closeChildEnds()
	rep, rerr := req.ReadReport(p.reportR)
	tree.Terminate(proctree.Grace)
	<-tree.Exited()
	return rep, rerr
}

// A script sees only descriptors 0–3, even when Gatehouse holds a
// descriptor without close-on-exec.
func TestScriptSeesOnlyFourDescriptors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gatehouse-private")
	os.WriteFile(path, []byte("x"), 0o600)
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0) // no O_CLOEXEC: inherited unless closed
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	syscall.Fstat(fd, &st)
	for _, conf := range []confine.Settings{confinedOn, confinedOff} {
		got, _ := probe(t, runnerWith(t, "", conf), map[string]any{"action": "fds", "dev": st.Dev, "ino": st.Ino})
		if got != "none" {
			t.Fatalf("%s: Gatehouse's descriptor %d reached the script: %s", conf.Filesystem, fd, got)
		}
	}
}

// One attempt tries to plant files in every other receiver's HOME and
// TMPDIR, even unconfined; the next attempt's HOME and TMPDIR are empty,
// because a receiver is only made at launch, for its own attempt.
func TestReceiverPlantingFails(t *testing.T) {
	for _, conf := range []confine.Settings{confinedOff, confinedOn} {
		r := runnerWith(t, "", conf)
		got, _ := probe(t, r, map[string]any{"action": "plant", "path": testRunsDir})
		if conf == confinedOff && got != "planted 0" {
			t.Fatalf("attempt 1 found other receivers to plant in: %s", got)
		}
		if next, _ := probe(t, r, map[string]any{"action": "look"}); next != "" {
			t.Fatalf("attempt 2 found planted files: %q", next)
		}
	}
}

// A confined script's environment is exactly the fixed one: nothing of
// the launcher's own (its request, GOMAXPROCS) reaches it.
func TestConfinedScriptEnvironmentIsTheFixedOne(t *testing.T) {
	var want []string
	for _, kv := range environment("r", "/h", "/t") {
		want = append(want, kv[:strings.IndexByte(kv, '=')])
	}
	slices.Sort(want)
	for _, conf := range []confine.Settings{confinedOn, confinedOff} {
		got, _ := probe(t, runnerWith(t, "", conf), map[string]any{"action": "env"})
		if got != strings.Join(want, ",") {
			t.Fatalf("%s: the script sees %s, want %s", conf.Filesystem, got, strings.Join(want, ","))
		}
	}
}

// Probe (used by gatehouse doctor) reports what a real attempt's launcher
// reports.
func TestProbeMatchesALaunch(t *testing.T) {
	for _, conf := range []confine.Settings{confinedOn, confinedOff} {
		r := runnerWith(t, "", conf)
		got, err := r.Probe(context.Background(), testPin, conf)
		if err != nil {
			t.Fatal(err)
		}
		_, env := probe(t, r, map[string]any{"action": "look"})
		if !reflect.DeepEqual(got, env.Confinement) {
			t.Fatalf("probe %+v, launch %+v", got, env.Confinement)
		}
	}
}

// A trusted scope approved under full confinement does not match a run
// that would be confined less: the runner refuses it before consent is
// consumed.
func TestWeakerConfinementThanRequiredIsRefused(t *testing.T) {
	on, err := runnerWith(t, "", confinedOn).Confinement(confinedOn)
	if err != nil {
		t.Skip(err)
	}
	_, ex := testBundle(t, "probe.mjs", nil)
	req := request(t, ex, `{"action":"look"}`)
	req.RequireConfinement = on
	consumed := false
	req.Authorize = func(context.Context) error { consumed = true; return nil }
	res := runnerWith(t, "", confinedOff).Run(context.Background(), req)
	wantStatus(t, res, StatusRefused, confine.CodeUnavailable)
	if consumed {
		t.Fatal("consent consumed by a refused run")
	}
	req.Authorize = nil
	wantStatus(t, runnerWith(t, "", confinedOn).Run(context.Background(), req), StatusSucceeded, "")
}

// A script of a root Gatehouse is uid and gid 1000 in a user namespace of
// its own, in PID and network namespaces of its own, under each ownership
// mechanism and confinement setting (the native launcher makes the user
// namespace itself; the supervisor does otherwise).
func TestScriptIsAnOrdinaryUserInItsOwnNamespaces(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("as an ordinary user the script keeps the user's ids")
	}
	self := func(n string) string { l, _ := os.Readlink("/proc/self/ns/" + n); return l }
	for _, own := range []string{"", proctree.MechanismCgroup, proctree.MechanismSubreaper} {
		for _, conf := range []confine.Settings{confinedOn, confinedOff} {
			got, _ := probe(t, runnerWith(t, own, conf), map[string]any{"action": "ids"})
			f := strings.Fields(got)
			if len(f) != 4 || f[0] != "1000:1000" || f[1] == self("user") || !strings.HasPrefix(f[1], "user:[") {
				t.Fatalf("%s %s: the script is %q", own, conf.Filesystem, got)
			}
			if pidns := own == ""; (f[2] != self("pid")) != pidns || !strings.HasPrefix(f[2], "pid:[") {
				t.Errorf("%s %s: PID namespace %s (own: %v)", own, conf.Filesystem, f[2], pidns)
			}
			if netns := conf.Network == confine.NetworkDeny && testSup.NetNamespaceUnavailable() == ""; (f[3] != self("net")) != netns {
				t.Errorf("%s %s: network namespace %s (own: %v)", own, conf.Filesystem, f[3], netns)
			}
		}
	}
}

// closingListener listens on network address and accepts and closes every
// connection until the test ends: a peer a probe can reach.
func closingListener(t *testing.T, network, address string) net.Listener {
	t.Helper()
	l, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l
}
