package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// The smoke test's verdict is returned, not an os.Exit, so runDesktop's
// deferred closes run; a UI that never calls fails with exit status 1.
func TestSmokeWatchFailsAsAnErrorWhenTheUINeverCalls(t *testing.T) {
	quit := make(chan struct{})
	var out bytes.Buffer
	result := smokeWatch(make(chan struct{}), time.Millisecond, func() { close(quit) }, &out)
	<-quit // the window is closed on the verdict, so the Wails loop returns
	err := result()
	var ce *CLIError
	if !errors.As(err, &ce) || ce.Code != "smoke_failed" {
		t.Fatalf("got %v, want a smoke_failed error", err)
	}
	var stderr bytes.Buffer
	if code := writeError(&stderr, err); code != 1 {
		t.Fatalf("exit status %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "never called the facade") {
		t.Fatalf("the error does not say what failed: %s", stderr.String())
	}
	if out.Len() != 0 {
		t.Fatalf("printed success on failure: %q", out.String())
	}
}

func TestSmokeWatchSucceedsOnceTheUICalled(t *testing.T) {
	called := make(chan struct{})
	quit := make(chan struct{})
	var mu sync.Mutex
	var out bytes.Buffer
	result := smokeWatch(called, time.Hour, func() { close(quit) }, lockedWriter{&mu, &out})
	close(called)
	<-quit
	if err := result(); err != nil {
		t.Fatalf("got %v after the UI called", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(out.String(), "AppInfo round-tripped") {
		t.Fatalf("printed %q", out.String())
	}
}

// A window closed by other means (the person, a crash of the web view)
// ends the watch at once with the truth: failed unless the UI had called.
func TestSmokeWatchEndsWhenTheWindowClosesFirst(t *testing.T) {
	quit := func() { t.Error("quit called after the window closed by itself") }
	if err := smokeWatch(make(chan struct{}), time.Hour, quit, &bytes.Buffer{})(); err == nil {
		t.Fatal("a window closed before the UI called passed the smoke test")
	}
	called := make(chan struct{})
	close(called)
	// The watch may or may not have seen the call before the window
	// closed; either way the UI did call, so the smoke test passed.
	if err := smokeWatch(called, time.Hour, func() {}, &bytes.Buffer{})(); err != nil {
		t.Fatalf("the UI called, yet: %v", err)
	}
}

// A quit asked for before Wails handed over the window's context (the
// smoke test's verdict can come first) closes the window once it starts;
// the context is read under the lock from other goroutines (-race).
func TestWindowHandleQuitBeforeStart(t *testing.T) {
	var quits []context.Context
	var mu sync.Mutex
	w := &windowHandle{quitWith: func(c context.Context) { mu.Lock(); quits = append(quits, c); mu.Unlock() }}
	if w.context() != nil {
		t.Fatal("a context before the window started")
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); w.quit() }()
	go func() { defer wg.Done(); _ = w.context() }()
	wg.Wait()
	ctx := context.WithValue(context.Background(), struct{}{}, "window")
	w.started(ctx)
	if w.context() != ctx {
		t.Fatal("the window's context is not kept")
	}
	w.quit()
	mu.Lock()
	defer mu.Unlock()
	if len(quits) != 2 || quits[0] != ctx || quits[1] != ctx {
		t.Fatalf("quits %v, want the window's context twice (the early quit on start, then the later one)", quits)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
