package app

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func redeem(t *testing.T, ts *testServer, nonce, origin string) (int, map[string]any) {
	t.Helper()
	return ts.do(t, req{method: "POST", path: "/session/open", body: `{"nonce":"` + nonce + `"}`, origin: origin})
}

// TestOpeningNonceIsOneTimeAndShortLived: the nonce of `serve --open`
// yields the token once, from this server's own origin, before it expires.
func TestOpeningNonceIsOneTimeAndShortLived(t *testing.T) {
	ts := startServer(t)
	srv := ts.srv
	open := srv.openingURL(ts.base)
	if strings.Contains(open, ts.token) || !strings.HasPrefix(open, ts.base+"/?open=") {
		t.Fatalf("opening URL %q", open)
	}
	nonce := strings.TrimPrefix(open, ts.base+"/?open=")
	if status, m := redeem(t, ts, nonce, "http://attacker.example"); status != 403 || m["code"] != "bad_origin" {
		t.Fatalf("foreign origin: %d %v", status, m)
	}
	if status, m := redeem(t, ts, nonce, ts.origin()); status != 200 || m["token"] != ts.token {
		t.Fatalf("first redeem: %d %v", status, m)
	}
	if status, m := redeem(t, ts, nonce, ts.origin()); status != 403 || m["code"] != "opening_link_used" {
		t.Fatalf("second redeem: %d %v", status, m)
	}
	// Expired: the server's clock moves past the TTL.
	late := strings.TrimPrefix(srv.openingURL(ts.base), ts.base+"/?open=")
	srv.mu.Lock()
	srv.now = func() time.Time { return time.Now().Add(openNonceTTL + time.Second) }
	srv.mu.Unlock()
	if status, m := redeem(t, ts, late, ts.origin()); status != 403 || m["code"] != "opening_link_used" {
		t.Fatalf("expired redeem: %d %v", status, m)
	}
	if status, _ := redeem(t, ts, "guess", ts.origin()); status != 403 {
		t.Fatalf("guessed nonce: %d", status)
	}
}

// TestServeOpenNeverPutsTheTokenOnACommandLine runs `gatehouse serve
// --open` for real: xdg-open (generic mode) starts $BROWSER, a script that
// records the command line it was given, which any local user could read
// in /proc. It must hold the one-time nonce, never the token.
func TestServeOpenNeverPutsTheTokenOnACommandLine(t *testing.T) {
	if _, err := os.Stat("/usr/bin/xdg-open"); err != nil {
		t.Skip("no /usr/bin/xdg-open")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "argv")
	browser := filepath.Join(dir, "browser.sh")
	os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" > "+record+".tmp && mv "+record+".tmp "+record+"\n"), 0o755)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--open")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "GATEHOUSE_DATA_DIR=" + filepath.Join(dir, "data"), "BROWSER=" + browser}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	buf := make([]byte, 256)
	n, _ := out.Read(buf)
	printed := strings.TrimSpace(string(buf[:n]))
	token := printed[strings.Index(printed, "token=")+len("token="):]
	var argv []byte
	for i := 0; i < 200 && len(argv) == 0; i++ {
		argv, _ = os.ReadFile(record)
		time.Sleep(50 * time.Millisecond)
	}
	if len(argv) == 0 {
		t.Fatal("the browser was never started")
	}
	if len(token) < 32 || strings.Contains(string(argv), token) {
		t.Fatalf("the browser's command line %q carries the token %q", argv, token)
	}
	base := printed[:strings.Index(printed, "/?token=")]
	opened := strings.TrimSpace(string(argv))
	if !strings.HasPrefix(opened, base+"/?open=") {
		t.Fatalf("opened %q, want %s/?open=<nonce>", opened, base)
	}
	body := strings.NewReader(`{"nonce":"` + strings.TrimPrefix(opened, base+"/?open=") + `"}`)
	r, _ := http.NewRequest("POST", base+"/session/open", body)
	r.Header.Set("Origin", base)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]string
	json.NewDecoder(resp.Body).Decode(&m)
	if resp.StatusCode != 200 || m["token"] != token {
		t.Fatalf("redeeming the opened nonce: %d %v", resp.StatusCode, m)
	}
}
