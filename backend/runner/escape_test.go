package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Each escape leaves processes behind; after the attempt, a /proc scan for
// the marker on their command lines must find none.
func TestEscapeSuite(t *testing.T) {
	cases := []struct {
		mode   string
		n      int
		status Status
	}{
		{"double-fork", 0, StatusSucceeded},
		{"setsid", 0, StatusSucceeded},
		{"new-pgrp", 0, StatusSucceeded},
		{"ignore-term", 0, StatusTimeout},
		{"hold-stdout", 0, StatusSucceeded},
		{"fork-loop", 40, StatusSucceeded},
		{"timeout", 0, StatusTimeout},
	}
	// The escapes that exit on their own get a generous timeout (a loaded CI
	// machine is slow to spawn 40 Node processes); the two that never exit
	// get the minimum.
	_, quick := testBundle(t, "escape.mjs", map[string]any{"timeoutMs": 1000})
	_, roomy := testBundle(t, "escape.mjs", map[string]any{"timeoutMs": 20000})
	for _, c := range cases {
		ex := roomy
		if c.status == StatusTimeout {
			ex = quick
		}
		t.Run(c.mode, func(t *testing.T) {
			marker := fmt.Sprintf("gatehouse-escape-%s-%d", c.mode, time.Now().UnixNano())
			in, _ := json.Marshal(map[string]any{"mode": c.mode, "marker": marker, "n": c.n})
			r := testRunner.Run(context.Background(), request(t, ex, string(in)))
			wantStatus(t, r, c.status, "")
			cl := r.Envelope.Cleanup
			if mech, _ := testRunner.Ownership(); cl == nil || !cl.Verified || cl.Mechanism != mech {
				t.Fatalf("cleanup %+v", cl)
			}
			if left := leftovers(marker); len(left) > 0 {
				t.Fatalf("processes of the attempt survived: %v", left)
			}
			if c.status == StatusSucceeded && cl.Signalled == 0 && cl.Mechanism != "pid_namespace" {
				t.Fatal("escapees were not found (nothing was signalled)")
			}
		})
	}
}

// Attempt 1 leaves traces in every place it can reach; attempt 2 of the
// same revision must see none of them, and attempt 1's child must be gone.
func TestAttemptsAreIsolated(t *testing.T) {
	_, ex := testBundle(t, "isolation.mjs", map[string]any{"outputSchema": json.RawMessage(`{"type":"object","properties":{}}`)})
	marker := fmt.Sprintf("gatehouse-isolation-%d", time.Now().UnixNano())
	type seen struct {
		Global       string
		HomeFile     bool
		TmpFiles     int
		Home, Tmp    string
		StagingWrite string
		EntryWrite   string
	}
	run := func(mode string) seen {
		in, _ := json.Marshal(map[string]any{"mode": mode, "marker": marker})
		r := testRunner.Run(context.Background(), request(t, ex, string(in)))
		wantStatus(t, r, StatusSucceeded, "")
		var out struct{ Echo seen }
		json.Unmarshal(r.Envelope.Output, &out)
		return out.Echo
	}
	first := run("leave")
	if first.StagingWrite == "succeeded" || first.EntryWrite == "succeeded" {
		t.Fatalf("the staging copy was writable: %+v", first)
	}
	if left := leftovers(marker); len(left) > 0 {
		t.Fatalf("attempt 1's child survived: %v", left)
	}
	second := run("look")
	if second.Global != "undefined" || second.HomeFile || second.TmpFiles != 0 {
		t.Fatalf("attempt 2 saw attempt 1's traces: %+v", second)
	}
	if second.Home == first.Home || second.Tmp == first.Tmp {
		t.Fatal("HOME/TMPDIR reused between attempts")
	}
	for _, d := range []string{first.Home, first.Tmp, second.Home} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s survived its attempt", d)
		}
	}
}

// Many attempts leave no file descriptors, goroutines, processes or
// staging directories behind. GATEHOUSE_SOAK=1 (make bench) runs the full
// 1,000 sequential attempts; make test runs 50.
func TestNoLeaksAcrossManyAttempts(t *testing.T) {
	sequential := 50
	if os.Getenv("GATEHOUSE_SOAK") != "" {
		sequential = 1000
	}
	_, ex := testBundle(t, "echo.mjs", nil)
	warm := testRunner.Run(context.Background(), request(t, ex, `{}`))
	wantStatus(t, warm, StatusSucceeded, "")
	time.Sleep(50 * time.Millisecond)
	fds0, gor0 := openFDs(t), runtime.NumGoroutine()
	for i := 0; i < sequential; i++ {
		r := testRunner.Run(context.Background(), request(t, ex, fmt.Sprintf(`{"i":%d}`, i)))
		if r.Envelope.Status != StatusSucceeded {
			t.Fatalf("attempt %d: %+v", i, r.Envelope)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := testRunner.Run(context.Background(), request(t, ex, fmt.Sprintf(`{"c":%d}`, i)))
			if r.Envelope.Status != StatusSucceeded || !strings.Contains(string(r.Envelope.Output), fmt.Sprintf(`"c":%d`, i)) {
				errs <- fmt.Sprintf("concurrent %d: %+v", i, r.Envelope)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Background work of finished attempts (spare receivers being made,
	// verified-empty cgroups being removed) winds down; wait for it to be
	// observed finished rather than for a fixed time.
	deadline := time.Now().Add(5 * time.Second)
	for (runtime.NumGoroutine() > gor0+2 || openFDs(t) > fds0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if fds := openFDs(t); fds > fds0 {
		t.Errorf("file descriptors grew from %d to %d", fds0, fds)
	}
	if g := runtime.NumGoroutine(); g > gor0+2 {
		t.Errorf("goroutines grew from %d to %d", gor0, g)
	}
	// Receivers are made per attempt and removed with it: none remains.
	if entries, _ := os.ReadDir(testRunsDir); len(entries) > 0 {
		t.Errorf("%d receiver directories left", len(entries))
	}
	if kids := childrenOf(os.Getpid()); len(kids) != 0 {
		t.Errorf("child processes left: %v", kids)
	}
	t.Logf("%d sequential + 8 concurrent attempts: fds %d→%d goroutines %d→%d", sequential, fds0, openFDs(t), gor0, runtime.NumGoroutine())
}

// openFDs counts this process's open descriptors, leaving out the SQLite
// connection pool's database files (the pool grows to the concurrency it
// has seen, a bounded cache rather than a per-attempt leak).
func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if !strings.Contains(l, "gatehouse.db") {
			n++
		}
	}
	return n
}

// childrenOf lists live processes whose parent is pid, from /proc.
func childrenOf(pid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) > 1 && f[1] == fmt.Sprint(pid) && f[0] != "Z" {
			out = append(out, e.Name())
		}
	}
	return out
}
