package capture

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// fakeNode writes an executable shell script that stands for Node.
func fakeNode(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// captureBounded is Capture, failing the test when it has not returned
// within a minute (a hang).
func captureBounded(t *testing.T, sup *proctree.Supervisor, sc *Scenario, opts Options) (*Record, error) {
	t.Helper()
	type result struct {
		rec *Record
		err error
	}
	res := make(chan result, 1)
	go func() {
		rec, err := Capture(context.Background(), sup, sc, opts)
		res <- result{rec, err}
	}()
	select {
	case r := <-res:
		return r.rec, r.err
	case <-time.After(time.Minute):
		t.Fatal("the capture hung")
		return nil, nil
	}
}

// settledGoroutines waits until no more goroutines run than before (the
// capture's own end asynchronously), dumping them when some remain.
func settledGoroutines(t *testing.T, before int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if runtime.NumGoroutine() <= before {
			return
		}
	}
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 1) //nolint:errcheck // for the message only
	t.Fatalf("%d goroutines remain, %d before:\n%s", runtime.NumGoroutine(), before, b.String())
}

// TestCaptureFailsWhenItsRendererFailsItsHello: the target is launched
// without waiting for the renderer's hello (it comes while the target
// runs), so a helper that exits at once, prints garbage, sends another
// message first or hangs before its hello is found after the launch: the
// capture returns its record (the target ran) with an error saying what
// the renderer did, and only once the target's tree was ended and proven
// gone; no helper, no member of the tree and no goroutine of the capture
// remains, and nothing hangs (the hang ends at the helper's timeout). A
// target without output (which owes no frame) fails the same way.
// Checked to fail with drain's awaitRenderer removed (the targets
// without output then succeed), with greet taking any first message as
// the hello, and with the hello not owed (the hang then never ends).
func TestCaptureFailsWhenItsRendererFailsItsHello(t *testing.T) {
	cases := []struct {
		name, body, want string
		ahead            bool // run through Renderers, with a 1 s timeout
	}{
		{"exits at once", "exit 1", "it ended (EOF)", false},
		{"exits at once, started ahead", "exit 1", "it ended (EOF)", true},
		{"prints garbage", "printf 'garbage'; exec sleep 60", "it sent a message of", false},
		{"another message first", `printf 'f\000\000\000\000'; exec sleep 60`, `answered 'f' before its hello`, false},
		{"hangs before its hello", "exec sleep 60", "did not answer within 1s", true},
	}
	for _, tc := range cases {
		for _, script := range []string{"echo hi", ": > ran"} {
			t.Run(tc.name+"/"+script, func(t *testing.T) {
				if len(rendererPids()) != 0 {
					t.Skip("another renderer helper of this process is alive")
				}
				sc, opts := shScenario(t, script, nil)
				sup := newSupervisor(t)
				node := fakeNode(t, tc.body)
				before := runtime.NumGoroutine()
				opts.Node = node
				if tc.ahead {
					opts.Renderers = NewRenderers(RendererHelper{Node: node, Supervisor: sup, Timeout: time.Second})
				}
				rec, err := captureBounded(t, sup, sc, opts)
				if opts.Renderers != nil {
					opts.Renderers.Close()
				}
				if err == nil || !strings.Contains(err.Error(), "terminal renderer (xterm.js helper) failed") || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want the renderer's failure: %s", err, tc.want)
				}
				if rec == nil {
					t.Fatal("no record, although the target was launched")
				}
				if rec.Cleanup.OwnedProcessGroup != OwnedProcessGroupVerified || rec.Exit.Reason != ExitReasonExited {
					t.Fatalf("cleanup %+v, exit %+v", rec.Cleanup, rec.Exit)
				}
				if script == ": > ran" {
					if _, err := os.Stat(filepath.Join(sc.WorkingDirectory, "ran")); err != nil {
						t.Fatalf("the target did not run: %v", err)
					}
				}
				if left := proctree.ScanMarked(MarkerVariable + "=" + opts.RunID); len(left) != 0 {
					t.Fatalf("members of the target's tree remain: %v", left)
				}
				if pids := rendererPids(); len(pids) != 0 {
					t.Fatalf("renderer helpers remain: %v", pids)
				}
				settledGoroutines(t, before)
			})
		}
	}
}

// forgedSnapshotHelper is a testHelper whose snapshot directory holds a
// snapshot file consistent in itself (its key and SHA-256 match, as one
// the user wrote would) but whose blob Node does not start from: another
// snapshot's, built with other V8 flags.
func forgedSnapshotHelper(t *testing.T) RendererHelper {
	t.Helper()
	base := testHelper(t)
	b := otherFlagsSnapshot(t, base)
	dir := filepath.Join(t.TempDir(), "cache")
	h := snapshotHelper(t, base, dir)
	forgeSnapshot(t, h, dir, b[len(snapshotMagic)+130:])
	return h
}

// TestCaptureRestartsARendererItsSnapshotDoesNotStart: a capture whose
// helper, launched from a verified snapshot Node does not start from,
// fails its hello while the target already runs gets a helper started
// with the loader instead, given everything recorded meanwhile: the
// capture succeeds with the screens of a capture with the loader, and
// Status says the snapshot was dropped. The target's orphan (reparented
// to Gatehouse at once) outlives its root, and the failed helper's tree
// (which, started before the target, also claims that orphan) is not
// terminated before settlement: settlement finds the orphan alive and
// ends it. Checked to fail with the restart removed (launchScreen not
// setting it), and with the failed helper's tree terminated at the
// restart (the orphan is then gone before settlement).
func TestCaptureRestartsARendererItsSnapshotDoesNotStart(t *testing.T) {
	h := forgedSnapshotHelper(t)
	script := `(setsid sh -c 'exec sleep 30' </dev/null >/dev/null 2>&1 &); printf 'a\033[1;31mb\033[0m\r\n\344\270\255\033[3b\r\nxy\033[b|'; sleep 0.2; printf '\033[?1049hz'`
	settle := func(m obj) { m["settle_ms"] = 300 }
	sc, opts := shScenario(t, script, settle)
	opts.NodeSHA256, opts.Snapshots = "", nil
	want := captureWith(t, h.Supervisor, sc, opts)
	sc, opts = shScenario(t, script, settle)
	opts.NodeSHA256, opts.Snapshots = h.NodeSHA256, h.Snapshots
	got := captureWith(t, h.Supervisor, sc, opts)
	for _, rec := range []*Record{want, got} {
		if s := rec.Settlement; s.State != SettlementAliveAtDeadline || s.CleanupOutcome != CleanupCleaned {
			t.Errorf("settlement %+v, want the orphan found alive and ended", s)
		}
	}
	if st := h.Snapshots.Status(); !strings.Contains(st, "did not start from the snapshot") {
		t.Fatalf("status %q", st)
	}
	screens := func(rec *Record) []RenderedFrame {
		var out []RenderedFrame
		for _, f := range rec.RenderedFrames {
			f.Sequence, f.AtMS = 0, 0
			out = append(out, f)
		}
		return out
	}
	// the frames may be cut elsewhere (chunks are read as they come);
	// the last screen of each is the same
	g, w := screens(got), screens(want)
	if len(g) == 0 || !reflect.DeepEqual(g[len(g)-1], w[len(w)-1]) {
		t.Fatalf("screens after the restart:\n%#v\nwant\n%#v", g, w)
	}
	if output(got) != output(want) {
		t.Fatalf("output %q, want %q", output(got), output(want))
	}
}

// TestCaptureRecordsWhileItsRendererIsNotUp: the output a target writes
// before its renderer says hello is read and recorded meanwhile, never
// held back by the PTY: here the helper stands for one that is never up
// (it waits until the target finished writing 3 MB, then exits without a
// hello), so the target can only finish if the capture reads its
// terminal without the helper; every byte is in the raw frames and the
// capture fails with the helper's end. Checked to fail with the loop
// waiting for the hello before recording (the helper then waits for a
// target that cannot finish, until its 30 s timeout).
func TestCaptureRecordsWhileItsRendererIsNotUp(t *testing.T) {
	work := t.TempDir()
	done := filepath.Join(work, "finished")
	script := `stty -onlcr; head -c 3000000 /dev/zero | tr '\0' 'x'; : > ` + done
	sc, opts := shScenario(t, script, func(m obj) {
		m["working_directory"] = work
		m["limits"] = obj{"output_bytes": 10_000_000}
	})
	opts.Node = fakeNode(t, `while [ ! -e '`+done+`' ]; do sleep 0.02; done; exit 3`)
	rec, err := captureBounded(t, newSupervisor(t), sc, opts)
	if err == nil || !strings.Contains(err.Error(), "it ended (EOF)") {
		t.Fatalf("err %v, want the helper's end", err)
	}
	if rec == nil || rec.Cleanup.OwnedProcessGroup != OwnedProcessGroupVerified {
		t.Fatalf("record %v", rec != nil)
	}
	if out := output(rec); len(out) != 3_000_000 || strings.Count(out, "x") != 3_000_000 {
		t.Fatalf("recorded %d bytes of the 3,000,000 written", len(out))
	}
}
