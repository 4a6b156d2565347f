package app

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestColdStart measures `gatehouse serve` from exec to the first API
// answer, on a fresh data directory (first start: extracts the bundled
// skills and pins Node) and on a warm one. It reports, it does not assert:
// timing goals are benchmarks (make bench), not test verdicts.
func TestColdStart(t *testing.T) {
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	for _, phase := range []string{"fresh data directory", "warm data directory", "warm data directory"} {
		start := time.Now()
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GATEHOUSE_DATA_DIR=" + data}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		url := strings.TrimSpace(line)
		base, token, _ := strings.Cut(url, "/?token=")
		req, _ := http.NewRequest("POST", base+"/api/AppInfo", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Origin", base)
		resp, err := http.DefaultClient.Do(req)
		elapsed := time.Since(start)
		if err != nil || resp.StatusCode != 200 {
			cmd.Process.Kill()
			t.Fatalf("first answer: %v %v", err, resp)
		}
		resp.Body.Close()
		t.Logf("cold start to first API answer (%s): %v", phase, elapsed.Round(time.Millisecond))
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
}
