package capture

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// ledgerHarness serves the shims of sc to plain /bin/sh runs (no PTY, no
// capture engine): it checks the ledger and the generated scripts alone.
type ledgerHarness struct {
	t   *testing.T
	l   *ledger
	env []string
}

func newLedgerHarness(t *testing.T, shims ...any) *ledgerHarness {
	t.Helper()
	m := minimal()
	m["command_shims"] = shims
	sc := parseOK(t, mustJSON(t, m))
	l, err := newLedger(sc, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &ledgerHarness{t: t, l: l, env: l.environ([]string{"PATH=/usr/bin:/bin"})}
	t.Cleanup(func() { l.stop() })
	l.serve(time.Now())
	return h
}

// run runs script under /bin/sh, stops the ledger and returns stdout,
// stderr and every observation the ledger made.
func (h *ledgerHarness) run(script string) (string, string, []shimCall) {
	h.t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env, cmd.Dir = h.env, h.t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		h.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var calls []shimCall
	for {
		select {
		case c := <-h.l.calls:
			calls = append(calls, c)
			continue
		case err := <-done:
			if err != nil {
				h.t.Logf("sh: %v", err)
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			h.t.Fatalf("script did not finish; stdout %q stderr %q", out.String(), errOut.String())
		}
		break
	}
	// A call is observed when the ledger reads it, but handed on after
	// its replay has started: the last one may come after the script
	// ended (under load it did), so the run ends as a capture's does,
	// with stop, which waits for every call (run is used once per ledger).
	calls = append(calls, h.l.stop()...)
	return out.String(), errOut.String(), calls
}

func shimRoute(args []any, outputs []any, term obj, maxCalls int) obj {
	return obj{"arguments": args, "outputs": outputs, "termination": term, "max_calls": maxCalls}
}

func out(at int, stream, data string) obj { return obj{"at_ms": at, "stream": stream, "data": data} }

func exitWith(code int) obj { return obj{"type": "exit", "code": code} }

func TestShimEncodeRoundTripsThroughPrintf(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, s := range []string{"", "plain text", `back\slash \c \0101 %s %%`, "nl\nnl\r\n", string(all), "héllo ✓"} {
		enc := shimEncode(s)
		if strings.ContainsAny(enc, "\n\x00") {
			t.Fatalf("encoding of %q holds a newline or NUL", s)
		}
		for _, sh := range []string{"/bin/sh", "/bin/bash"} {
			if _, err := os.Stat(sh); err != nil {
				continue
			}
			got, err := exec.Command(sh, "-c", `printf '%b' "$1"`, "sh", enc).Output()
			if err != nil || string(got) != s {
				t.Errorf("%s: printf %%b of the encoding of %q = %q, %v", sh, s, got, err)
			}
		}
	}
}

func TestShimLedgerDirect(t *testing.T) {
	h := newLedgerHarness(t,
		obj{"name": "tool", "routes": []any{
			shimRoute([]any{"hi"}, []any{out(0, "stdout", "one\n"), out(100, "stderr", "two\n"), out(200, "stdout", "three\\n\x00\n")}, exitWith(4), 1),
			shimRoute([]any{"a b", "it's", `"q"`, "", "x\ny", "$HOME", "*"}, []any{out(0, "stdout", "quoted\n")}, exitWith(0), 1),
			shimRoute([]any{"term"}, []any{}, obj{"type": "signal", "signal": "SIGTERM"}, 1),
		}},
	)
	start := time.Now()
	stdout, stderr, calls := h.run(`tool hi; echo "rc=$?"; tool hi; echo "rc=$?"; tool nope; echo "rc=$?"
tool 'a b' "it's" '"q"' '' 'x
y' '$HOME' '*'; echo "rc=$?"; tool term; echo "rc=$?"`)
	if time.Since(start) < 200*time.Millisecond {
		t.Errorf("the timed outputs were not delayed")
	}
	if want := "one\nthree\\n\x00\nrc=4\nrc=127\nrc=127\nquoted\nrc=0\nrc=143\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	// unmatched and exhausted calls write nothing ("Terminated" is the
	// outer shell's report of the SIGTERM route)
	if !strings.HasPrefix(stderr, "two\n") || strings.Contains(stderr, "shim") {
		t.Errorf("stderr %q", stderr)
	}
	var outcomes []string
	for _, c := range calls {
		outcomes = append(outcomes, c.outcome)
	}
	if want := []string{"matched", "exhausted", "unmatched", "matched", "matched"}; !slices.Equal(outcomes, want) {
		t.Fatalf("outcomes %v, want %v", outcomes, want)
	}
	if c := calls[3]; *c.route != 1 || len(c.args) != 7 || c.args[4] != "x\ny" || c.command != "tool" {
		t.Errorf("quoted call %+v", c)
	}
	if calls[2].route != nil || *calls[1].route != 0 {
		t.Errorf("routes %v %v", calls[1].route, calls[2].route)
	}
}

func TestShimLedgerConcurrentCalls(t *testing.T) {
	slow := []any{out(0, "stdout", "start\n"), out(400, "stdout", "end\n")}
	h := newLedgerHarness(t, obj{"name": "job", "routes": []any{
		shimRoute([]any{"1"}, slow, exitWith(1), 1), shimRoute([]any{"2"}, slow, exitWith(2), 1),
	}})
	stdout, _, calls := h.run(`job 1 & a=$!; job 2 & b=$!; wait $a; echo "a=$?"; wait $b; echo "b=$?"`)
	// Timed from the first call's reception, not from before /bin/sh
	// starts (whose start-up a loaded machine stretches): serialized calls
	// end at least 800 ms after it, overlapping ones about 400 ms.
	if len(calls) > 0 {
		if d := time.Since(h.l.start) - calls[0].at; d >= 800*time.Millisecond {
			t.Errorf("two calls of 400 ms took %v after the first was received: they were serialized", d)
		}
	}
	if !strings.HasPrefix(stdout, "start\nstart\nend\n") || strings.Count(stdout, "end\n") != 2 ||
		!strings.Contains(stdout, "a=1\n") || !strings.HasSuffix(stdout, "b=2\n") {
		t.Errorf("stdout %q", stdout)
	}
	if len(calls) != 2 || calls[0].outcome != ShimOutcomeMatched || calls[1].outcome != ShimOutcomeMatched || *calls[0].route == *calls[1].route {
		t.Errorf("calls %+v", calls)
	}
}

func TestShimLedgerFailsClosed(t *testing.T) {
	h := newLedgerHarness(t, shim("tool"))
	f, err := os.OpenFile(h.l.dir+"/request", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage\x00x\x00x\x00x\x00x\x00x\x00")
	f.Close()
	var problem shimCall
	select {
	case problem = <-h.l.calls:
	case <-time.After(5 * time.Second):
		t.Fatal("the ledger did not report the broken request")
	}
	if !strings.Contains(problem.problem, "protocol marker") {
		t.Errorf("problem %+v", problem)
	}
	stdout, stderr, calls := h.run(`tool; echo "rc=$?"`)
	if stdout != "rc=127\n" || stderr != "" || len(calls) != 0 {
		t.Errorf("after failure: stdout %q stderr %q calls %+v", stdout, stderr, calls)
	}
}

func TestShimLedgerStopReleasesWaitingShims(t *testing.T) {
	h := newLedgerHarness(t, obj{"name": "tool", "routes": []any{shimRoute([]any{}, []any{out(10000, "stdout", "late\n")}, exitWith(0), 1)}})
	cmd := exec.Command("/bin/sh", "-c", `tool; echo "rc=$?"`)
	cmd.Env = h.env
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.l.calls:
	case <-time.After(5 * time.Second):
		t.Fatal("no call")
	}
	begin := time.Now()
	h.l.stop()
	if err := cmd.Wait(); err != nil || stdout.String() != "rc=127\n" || time.Since(begin) > 2*time.Second {
		t.Errorf("after stop: %v, stdout %q, %v", err, stdout.String(), time.Since(begin))
	}
	if rest := h.l.stop(); rest != nil {
		t.Errorf("second stop returned %v", rest)
	}
}
