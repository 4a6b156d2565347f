package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/policy"
)

// Behaviour tests: real PTYs, real programs (/bin/sh, /bin/sleep, less,
// stty), one capture each, checked against what the program is known to
// do. checkRecord (capture_test.go) also checks every record invariant,
// that record.Verify accepts it, and that nothing of the run survives.

// journalPos is the capture order of the journal entry of collection[index]
// (-1 when it is not journaled).
func journalPos(rec *Record, collection string, index int) int {
	for _, e := range rec.EventJournal {
		if e.Collection == collection && e.Index == index {
			return e.CaptureOrder
		}
	}
	return -1
}

// lastRenderedBefore is the last rendered frame journaled before capture
// order pos (nil when there is none).
func lastRenderedBefore(rec *Record, pos int) *RenderedFrame {
	var f *RenderedFrame
	for _, e := range rec.EventJournal[:pos] {
		if e.Collection == "rendered_frames" {
			f = &rec.RenderedFrames[e.Index]
		}
	}
	return f
}

func trimmed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " ")
	}
	return out
}

func TestBehaviourShellPrintsAndReadsInput(t *testing.T) {
	script := `printf 'name? '; read name; printf 'hello, %s!\n' "$name"; printf 'age? '; read age; echo "age=$age"; exit 4`
	sc, opts := shScenario(t, script, func(m obj) {
		m["events"] = []any{
			// Timed input races the shell's prompt; the margins are wide so a
			// loaded machine still prints the prompt first (reactive
			// scenarios are the race-free way, see reactive_test.go).
			obj{"type": "input", "at_ms": 600, "data": "Ada\r"},
			obj{"type": "input", "at_ms": 1200, "data": "36\r"},
		}
		m["checkpoints"] = []any{obj{"name": "greeted", "trigger": obj{"type": "terminal_literal", "value": "hello, Ada!"}}}
	})
	rec := capture(t, sc, opts)
	// The terminal echoes the input (CR becomes CRLF); the shell answers.
	if out, want := output(rec), "name? Ada\r\nhello, Ada!\r\nage? 36\r\nage=36\r\n"; out != want {
		t.Errorf("frames %q, want %q", out, want)
	}
	if rec.Exit.Code == nil || *rec.Exit.Code != 4 || rec.Exit.Reason != ExitReasonExited || rec.Settlement.State != SettlementQuiesced {
		t.Errorf("exit %+v settlement %+v", rec.Exit, rec.Settlement)
	}
	ev := rec.InteractionEvents
	if len(ev) != 2 || ev[0].Data != "Ada\r" || ev[1].Data != "36\r" || ev[0].Outcome != OutcomeDispatched || ev[1].Outcome != OutcomeDispatched ||
		ev[0].DispatchedAtMS < 600 || ev[1].DispatchedAtMS < 1200 || ev[0].ScheduledAtMS != 600 || ev[1].ScheduledAtMS != 1200 {
		t.Errorf("interaction events %+v", ev)
	}
	// The prompt was on the screen before the input was sent, and the
	// answer after: the journal keeps that order.
	first := 0
	for i, f := range rec.Frames {
		if strings.Contains(f.Data, "name?") {
			first = i
			break
		}
	}
	if p, in := journalPos(rec, "frames", first), journalPos(rec, "interaction_events", 0); p < 0 || in < 0 || p > in {
		t.Errorf("prompt frame at capture order %d, input at %d", p, in)
	}
	// Each input is journaled before its echo (order.go).
	for i, echo := range []string{"Ada", "36"} {
		for k, f := range rec.Frames {
			if strings.Contains(f.Data, echo) {
				if p, in := journalPos(rec, "frames", k), journalPos(rec, "interaction_events", i); p < in {
					t.Errorf("echo of input %d at capture order %d, the input at %d", i, p, in)
				}
				break
			}
		}
	}
	greeted := checkpointNamed(t, rec, "greeted")
	if greeted.AtMS < ev[0].DispatchedAtMS {
		t.Errorf("checkpoint on the answer at %d ms, before the input at %d ms", greeted.AtMS, ev[0].DispatchedAtMS)
	}
	last := rec.RenderedFrames[len(rec.RenderedFrames)-1]
	if got := trimmed(last.Lines)[:5]; strings.Join(got, "|") != "name? Ada|hello, Ada!|age? 36|age=36|" ||
		last.CursorX != 0 || last.CursorY != 4 || last.ActiveBuffer != BufferNormal || last.Columns != 80 || last.Rows != 24 {
		t.Errorf("last screen %q cursor %d,%d %s", got, last.CursorX, last.CursorY, last.ActiveBuffer)
	}
}

func TestBehaviourSignals(t *testing.T) {
	// dash runs a trap once its foreground sleep ends, so the loop sleeps
	// in short steps.
	loop := `trap 'echo "caught INT"; exit 130' INT; trap 'echo "caught TERM"; exit 143' TERM; echo ready; while :; do sleep 0.05; done`
	for _, c := range []struct {
		signal, caught string
		code           int    // -1: none
		killedBy       string // exit.signal
	}{
		{"SIGINT", "caught INT", 130, ""},
		{"SIGTERM", "caught TERM", 143, ""},
		{"SIGKILL", "", -1, "SIGKILL"},
	} {
		t.Run(c.signal, func(t *testing.T) {
			sc, opts := shScenario(t, loop, func(m obj) {
				m["events"] = []any{
					obj{"type": "signal", "at_ms": 300, "signal": c.signal},
					obj{"type": "signal", "at_ms": 5000, "signal": "SIGTERM"},
				}
				m["checkpoints"] = []any{obj{"name": "ready", "trigger": obj{"type": "terminal_literal", "value": "ready"}}}
			})
			rec := capture(t, sc, opts)
			ev := rec.InteractionEvents
			if len(ev) != 2 || ev[0].Type != EventSignal || ev[0].Data != c.signal || ev[0].Outcome != OutcomeDispatched ||
				ev[1].Data != "SIGTERM" || ev[1].Outcome != OutcomeTargetExited {
				t.Fatalf("interaction events %+v", ev)
			}
			out := output(rec)
			if !strings.HasPrefix(out, "ready\r\n") || c.caught != "" && !strings.Contains(out, c.caught+"\r\n") || c.caught == "" && out != "ready\r\n" {
				t.Errorf("frames %q", out)
			}
			if c.code >= 0 && (rec.Exit.Code == nil || *rec.Exit.Code != c.code || rec.Exit.Signal != nil) ||
				c.code < 0 && (rec.Exit.Code != nil || rec.Exit.Signal == nil || *rec.Exit.Signal != c.killedBy) ||
				rec.Exit.Reason != ExitReasonExited {
				t.Errorf("exit %+v", rec.Exit)
			}
			// The signal is journaled before the exit and the output it caused.
			if s, e := journalPos(rec, "interaction_events", 0), journalPos(rec, "exit", 0); s < 0 || e < s {
				t.Errorf("signal at capture order %d, exit at %d", s, e)
			}
			for k, f := range rec.Frames {
				if c.caught != "" && strings.Contains(f.Data, c.caught) && journalPos(rec, "frames", k) < journalPos(rec, "interaction_events", 0) {
					t.Errorf("%q journaled before the signal: %+v", c.caught, rec.EventJournal)
				}
			}
		})
	}
}

func TestBehaviourSensitiveInputNeverRecorded(t *testing.T) {
	// The pin holds letters that are not hexadecimal: a digits-only pin
	// turns up by chance in the record's SHA-256 values (one run's
	// comparison_contract_sha256 held "4711").
	const pass, pin = "correct-horse-battery", "kq4711"
	// The shell reads the password with echo off (as passwd does), the pin
	// with echo on, and then prints both back, the password twice and
	// split over two writes. Each prompt is printed once the terminal is
	// set for its answer, so a prompt read before its input proves the
	// terminal echoed, or did not echo, the input as the test expects.
	script := `stty -echo; printf 'password: '; read p; stty echo; printf '\npin: '; read n;` +
		` printf 'you typed %s and %s\n' "$p" "$n"; printf '%s' "${p%-*}"; sleep 0.2; printf '%s\n' "-${p##*-}"; printf 'n=%s\n' "$n"; read x; echo "last=$x"`
	rec := withTimingPrecondition(t, func(t *testing.T, scale int) (*Record, string) {
		sc, opts := shScenario(t, script, func(m obj) {
			m["events"] = []any{
				obj{"type": "input", "at_ms": 150 * scale, "data": pass + "\r", "sensitive": true},
				obj{"type": "input", "at_ms": 300 * scale, "data": pin + "\r", "sensitive": true},
				obj{"type": "input", "at_ms": 900 * scale, "data": "plain\r"},
			}
		})
		rec := capture(t, sc, opts)
		// Whatever the timing, neither whole value is ever recorded.
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{pass, pin} {
			if strings.Contains(string(b), s) {
				t.Fatalf("the record contains the sensitive input %q: %s", s, excerpt(string(b), s))
			}
		}
		// The password's halves are redacted as the password only when
		// they are written one after the other: the plain input's echo
		// must come after them, so after the "n=" line.
		for i, prompt := range []string{"password: ", "pin: ", "n="} {
			if !frameBefore(rec, prompt, i) {
				return rec, fmt.Sprintf("input %d was performed before %q was read", i, prompt)
			}
		}
		return rec, ""
	})
	out := output(rec)
	if out != "password: \r\npin: <redacted>\r\nyou typed <redacted> and <redacted>\r\n<redacted>\r\nn=<redacted>\r\nplain\r\nlast=plain\r\n" {
		t.Errorf("frames %q", out)
	}
	ev := rec.InteractionEvents
	if len(ev) != 3 || ev[0].Data != RedactedInput(len(pass)+1) || ev[1].Data != RedactedInput(len(pin)+1) || ev[2].Data != "plain\r" {
		t.Errorf("interaction events %+v", ev)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"correct-horse", "battery"} {
		if strings.Contains(string(b), s) {
			t.Errorf("the record contains the sensitive input %q: %s", s, excerpt(string(b), s))
		}
	}
}

func TestBehaviourSensitiveInputOfSeveralLines(t *testing.T) {
	// One sensitive input of two lines: the terminal echoes each line on
	// its own (CR comes back as CRLF), so each line is redacted.
	sc, opts := shScenario(t, `read a; read b; echo "[$a][$b]"`, func(m obj) {
		m["events"] = []any{obj{"type": "input", "at_ms": 100, "data": "alpha7\rbravo8\r", "sensitive": true}}
	})
	rec := capture(t, sc, opts)
	if out := output(rec); out != "<redacted>\r\n<redacted>\r\n[<redacted>][<redacted>]\r\n" {
		t.Errorf("frames %q", out)
	}
	b, _ := json.Marshal(rec)
	for _, s := range []string{"alpha7", "bravo8"} {
		if strings.Contains(string(b), s) {
			t.Errorf("the record contains %q: %s", s, excerpt(string(b), s))
		}
	}
}

func TestBehaviourSecretAliasNeverAnywhere(t *testing.T) {
	const secret = "s3cr3tVALUEq7"
	root := t.TempDir()
	// The secret reaches the terminal (plain, at the right margin so the
	// screen wraps it, and in a rendered row of its own), a child's
	// command line, a file's name, content and symlink target in a
	// filesystem root, and a shim's arguments.
	script := `printf '%s\n' "$SECRET"; printf '%74s%s\n' x "$SECRET"; /bin/sh -c 'sleep 0.3; :' "$SECRET";` +
		` echo "$SECRET" > "` + root + `/$SECRET.txt"; ln -s "$SECRET" "` + root + `/link"; codex "$SECRET"; echo done`
	sc, opts := shScenario(t, script, func(m obj) {
		m["environment"] = obj{"PATH": "/usr/bin:/bin", "SECRET": secret}
		m["secret_aliases"] = []any{"SECRET"}
		m["filesystem_roots"] = []any{root}
		m["events"] = []any{obj{"type": "input", "at_ms": 100, "data": "typed " + secret}}
		m["checkpoints"] = []any{obj{"name": "seen", "trigger": obj{"type": "terminal_literal", "value": "done"}}}
		m["command_shims"] = []any{obj{"name": "codex", "routes": []any{shimRoute([]any{"--version"}, []any{}, exitWith(0), 1)}}}
	})
	rec := capture(t, sc, opts)
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Errorf("the record contains the secret alias value: %s", excerpt(string(b), secret))
	}
	// A screen row never shows a piece of the secret either: the row that
	// wraps it is redacted as a whole secret.
	for _, f := range rec.RenderedFrames {
		for y, l := range append(f.Lines, f.SerializedState) {
			for _, piece := range []string{secret[:6], secret[len(secret)-6:]} {
				if strings.Contains(l, piece) {
					t.Errorf("rendered frame %d row %d (%d = serialized_state) shows %q: %q", f.Sequence, y, len(f.Lines), piece, l)
				}
			}
		}
	}
	if !strings.Contains(output(rec), "<redacted>\r\n") || fileIn(rec.FilesAfter, "<filesystem-root-0>/<redacted>.txt") == nil {
		t.Errorf("frames %q, files %+v", output(rec), rec.FilesAfter)
	}
	if l := fileIn(rec.FilesAfter, "<filesystem-root-0>/link"); l == nil || l.SymlinkTarget == nil || *l.SymlinkTarget != RedactedSecret {
		t.Errorf("link %+v", l)
	}
	sampled := false
	for _, p := range rec.ProcessSamples {
		sampled = sampled || strings.Contains(p.Command, "sleep 0.3; : <redacted>")
	}
	if !sampled {
		t.Errorf("the child with the secret in its command line was not sampled: %+v", rec.ProcessSamples)
	}
}

// excerpt shows where needle occurs in s.
func excerpt(s, needle string) string {
	i := strings.Index(s, needle)
	return s[max(i-80, 0):min(i+len(needle)+80, len(s))]
}

// readPidFile reads the pids a test program wrote, one per line.
func readPidFile(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// goneFromProc fails unless pid is absent from /proc or is now another
// process (one that does not carry the capture's marker).
func goneFromProc(t *testing.T, pid int, marker string) {
	t.Helper()
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return // no such process
	}
	if strings.Contains(string(env), marker) {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		t.Errorf("process %d of the capture is still alive: %s", pid, stat)
	}
}

func TestBehaviourBackgroundChildOutlivesRoot(t *testing.T) {
	for _, c := range []struct{ name, spawn string }{
		// ignores SIGHUP, so the session leader's exit does not end it
		{"background", `trap '' HUP; /bin/sh -c 'echo $$ >> PIDS; exec sleep 30' &`},
		// a new session: no SIGHUP, no controlling terminal, not in the root's group
		{"setsid", `setsid /bin/sh -c 'echo $$ >> PIDS; exec sleep 30' </dev/null >/dev/null 2>&1 &`},
		// double fork: the parent exits, the grandchild is reparented
		{"daemonized", `/bin/sh -c '(trap "" HUP; /bin/sh -c "echo \$\$ >> PIDS; exec sleep 30" &) ; exit 0'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pids")
			spawn := strings.ReplaceAll(c.spawn, "PIDS", pidFile)
			script := spawn + "\n" + `while [ ! -s ` + pidFile + ` ]; do sleep 0.02; done; echo spawned; sleep 0.2`
			sc, opts := shScenario(t, script, func(m obj) { m["settle_ms"] = 300 })
			rec := capture(t, sc, opts) // checkRecord also scans /proc for the marker
			if rec.Exit.Code == nil || *rec.Exit.Code != 0 || !strings.Contains(output(rec), "spawned") {
				t.Errorf("exit %+v, frames %q", rec.Exit, output(rec))
			}
			s := rec.Settlement
			if s.State != SettlementAliveAtDeadline || s.CleanupOutcome != CleanupCleaned || s.ElapsedMS < 300 {
				t.Errorf("settlement %+v", s)
			}
			pids := readPidFile(t, pidFile)
			if len(pids) != 1 {
				t.Fatalf("pids %v", pids)
			}
			goneFromProc(t, pids[0], MarkerVariable+"="+opts.RunID)
			sampled := false
			for _, p := range rec.ProcessSamples {
				sampled = sampled || p.Command == "sleep 30"
			}
			if !sampled {
				t.Errorf("the surviving child was never sampled: %+v", rec.ProcessSamples)
			}
		})
	}
	t.Run("keeps writing", func(t *testing.T) {
		// A child that writes without end after the root exits: the
		// capture still ends at settle_ms and cleans it up.
		sc, opts := shScenario(t, `trap '' HUP; /usr/bin/yes child-output & sleep 0.2; echo root-done`, func(m obj) {
			m["settle_ms"] = 300
			m["limits"] = obj{"output_bytes": 100_000}
		})
		start := time.Now()
		rec := capture(t, sc, opts)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the capture took %v", d)
		}
		if s := rec.Settlement; s.State != SettlementAliveAtDeadline || s.CleanupOutcome != CleanupCleaned {
			t.Errorf("settlement %+v", s)
		}
		if rec.Exit.Code == nil || *rec.Exit.Code != 0 || !rec.Truncated || !strings.Contains(output(rec), "child-output\r\n") {
			t.Errorf("exit %+v, truncated %v", rec.Exit, rec.Truncated)
		}
	})
	t.Run("exits within the settle window", func(t *testing.T) {
		// The child finishes by itself 300 ms after the root: settlement
		// waits for it, records its output and needs no cleanup.
		sc, opts := shScenario(t, `trap '' HUP; (sleep 0.3; echo late) & echo root-done`, func(m obj) { m["settle_ms"] = 3000 })
		rec := capture(t, sc, opts)
		s := rec.Settlement
		if s.State != SettlementQuiesced || s.CleanupOutcome != CleanupNotRequired || s.ElapsedMS < 200 || s.ElapsedMS >= 3000 {
			t.Errorf("settlement %+v", s)
		}
		if out := output(rec); !strings.Contains(out, "root-done\r\n") || !strings.Contains(out, "late\r\n") {
			t.Errorf("frames %q", out)
		}
	})
}

func TestBehaviourEveryPolicyDenialReason(t *testing.T) {
	work := t.TempDir()
	fsRoot := filepath.Join(work, "state")
	if err := os.Mkdir(fsRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(work, "ran")
	allowed := func() policy.CaptureSettings {
		s := policy.DefaultCaptureSettings()
		s.Enabled, s.AllowExternalNetwork = true, true
		s.ExecutableRoots, s.WorkingRoots, s.AllowedEnv = []string{"/bin"}, []string{work}, []string{"PATH"}
		return s
	}
	cases := []struct {
		reason string
		edit   func(s *policy.CaptureSettings, sc *Scenario)
	}{
		{policy.ReasonCaptureDisabled, func(s *policy.CaptureSettings, _ *Scenario) { s.Enabled = false }},
		{policy.ReasonScenarioNotApproved, func(_ *policy.CaptureSettings, sc *Scenario) { sc.Approved = false }},
		{policy.ReasonHostNetworkNotApproved, func(s *policy.CaptureSettings, _ *Scenario) { s.AllowExternalNetwork = false }},
		// /bin/sh is judged as the kernel reaches it (on merged-/usr systems
		// /usr/bin/dash, so a root of /usr/bin would hold it).
		{policy.ReasonExecutableOutsideRoots, func(s *policy.CaptureSettings, _ *Scenario) { s.ExecutableRoots = []string{"/usr/sbin"} }},
		{policy.ReasonExecutableOutsideRoots, func(s *policy.CaptureSettings, _ *Scenario) { s.ExecutableRoots = []string{"/bi"} }},
		{policy.ReasonWorkingDirectoryOutsideRoots, func(s *policy.CaptureSettings, _ *Scenario) { s.WorkingRoots = []string{fsRoot} }},
		{policy.ReasonEnvironmentNameNotAllowed, func(s *policy.CaptureSettings, _ *Scenario) { s.AllowedEnv = []string{"HOME"} }},
		{policy.ReasonEnvironmentNameNotAllowed, func(_ *policy.CaptureSettings, sc *Scenario) {
			sc.InheritEnvironment = []string{"LANG"}
		}},
		{policy.ReasonFilesystemRootOutsideRoots, func(_ *policy.CaptureSettings, sc *Scenario) {
			sc.FilesystemRoots = []string{fsRoot, filepath.Dir(work)}
		}},
	}
	sup := newSupervisor(t)
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s", i, c.reason), func(t *testing.T) {
			sc := parseOK(t, mustJSON(t, obj{"approved": true, "executable": "/bin/sh", "arguments": []any{"-c", "touch " + marker},
				"working_directory": work, "environment": obj{"PATH": "/usr/bin:/bin"}, "filesystem_roots": []any{fsRoot}}))
			tmp := t.TempDir()
			opts := Options{Policy: allowed(), TempDir: tmp, Node: testNode(t), RunID: fmt.Sprintf("policy-test-%d-%d", os.Getpid(), i)}
			if i == 0 { // the unedited scenario and policy are allowed
				if _, err := Capture(context.Background(), sup, sc, opts); err != nil {
					t.Fatalf("allowed capture: %v", err)
				}
				if err := os.Remove(marker); err != nil {
					t.Fatalf("the allowed capture did not run: %v", err)
				}
			}
			c.edit(&opts.Policy, sc)
			rec, err := Capture(context.Background(), sup, sc, opts)
			var pe *PolicyError
			if rec != nil || !errors.As(err, &pe) || pe.Reason != c.reason || pe.Message == "" ||
				!strings.Contains(err.Error(), c.reason) {
				t.Fatalf("record %v, error %v; want reason %s", rec != nil, err, c.reason)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("a refused scenario ran")
			}
			if entries, _ := os.ReadDir(tmp); len(entries) > 0 {
				t.Errorf("a refused capture made %v", entries)
			}
		})
	}
}

func TestBehaviourPIDNormalization(t *testing.T) {
	// The root's pid is known from launch; the child's once it is
	// sampled (every 50 ms), so it is printed 300 ms later. A pid inside a
	// longer word or number is left alone.
	script := `echo "me=$$ x$$ $$0"; sleep 0.6 & c=$!; sleep 0.3; echo "child=$c"; wait`
	for _, pids := range []bool{true, false} {
		t.Run(fmt.Sprint(pids), func(t *testing.T) {
			sc, opts := shScenario(t, script, func(m obj) { m["normalization"] = obj{"pids": pids} })
			rec := capture(t, sc, opts)
			out := output(rec)
			m := regexp.MustCompile(`x(\d+) `).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no root pid in %q", out)
			}
			realRoot := m[1]
			var root, child *ProcessSample
			for i, p := range rec.ProcessSamples {
				switch p.Command {
				case "sleep 0.6":
					child = &rec.ProcessSamples[i]
				default:
					if strings.Contains(p.Command, "echo") && root == nil {
						root = &rec.ProcessSamples[i]
					}
				}
			}
			if root == nil || child == nil {
				t.Fatalf("samples %+v", rec.ProcessSamples)
			}
			want := fmt.Sprintf("me=%[1]s x%[1]s %[1]s0\r\nchild=%[2]d\r\n", realRoot, child.PID)
			if pids {
				want = fmt.Sprintf("me=<pid> x%[1]s %[1]s0\r\nchild=<pid>\r\n", realRoot)
				// Pid fields are ordinals: the root first, its child next,
				// the root's parent (outside the tree) 0.
				if root.PID != 1 || root.ParentPID != 0 || child.PID != 2 || child.ParentPID != 1 ||
					*root.ProcessGroupID != 1 || *child.SessionID != *root.SessionID {
					t.Errorf("normalized pid fields: root %+v child %+v", *root, *child)
				}
			} else if strconv.Itoa(root.PID) != realRoot || root.ParentPID != os.Getpid() || child.ParentPID != root.PID {
				t.Errorf("real pid fields: root %+v child %+v (root pid %s)", *root, *child, realRoot)
			}
			if out != want {
				t.Errorf("frames %q, want %q", out, want)
			}
		})
	}
}

func TestBehaviourOutputBeforeExitIsJournaledFirst(t *testing.T) {
	// Everything the root wrote before it exited is journaled before its
	// exit, and the screen at a root_exit checkpoint shows it (order.go).
	sc, opts := shScenario(t, `i=0; while [ $i -lt 200 ]; do echo "line $i"; i=$((i+1)); done; printf 'the end\n'`, func(m obj) {
		m["checkpoints"] = []any{obj{"name": "exited", "trigger": obj{"type": "root_exit"}}}
	})
	rec := capture(t, sc, opts)
	exit := journalPos(rec, "exit", 0)
	for i := range rec.Frames {
		if p := journalPos(rec, "frames", i); p > exit {
			t.Errorf("frame %d (%q) at capture order %d, after the exit at %d", i, rec.Frames[i].Data, p, exit)
		}
	}
	f := lastRenderedBefore(rec, checkpointPos(t, rec, "exited"))
	if f == nil || strings.TrimRight(f.Lines[f.CursorY-1], " ") != "the end" {
		t.Errorf("screen at root exit: %+v", f)
	}
}
