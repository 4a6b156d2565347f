package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A stop registered after the facade closed (the desktop window's DOM-ready
// callback racing the end of the Wails loop) runs at once instead of never;
// one registered before runs exactly once, at close.
func TestOnCloseAfterCloseRunsAtOnce(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	io := IO{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, Getenv: func(k string) string {
		if k == "GATEHOUSE_DATA_DIR" {
			return dataDir
		}
		return os.Getenv(k)
	}}
	env, err := openEnv(context.Background(), io)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	f, err := newFacade(env, "desktop", consentWindow{})
	if err != nil {
		t.Fatal(err)
	}
	before, after := 0, 0
	f.onClose(func() { before++ })
	f.close()
	if before != 1 {
		t.Fatalf("a stop registered before close ran %d times at close, want 1", before)
	}
	f.onClose(func() { after++ })
	if after != 1 {
		t.Fatalf("a stop registered after close ran %d times, want 1 (at once)", after)
	}
}
