package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// runtimeFileName is where a running app announces its loopback address so
// `gatehouse mcp` can find it.
const runtimeFileName = "runtime.json"

// RuntimeInfo is the content of the runtime file.
type RuntimeInfo struct {
	URL string `json:"url"`
	PID int    `json:"pid"`
}

// writeRuntimeFile records the app's base URL (0600, replaced atomically)
// and returns a function that removes it again.
func writeRuntimeFile(env *Env, url string) (func(), error) {
	path := filepath.Join(env.DataDir, runtimeFileName)
	b, _ := json.Marshal(RuntimeInfo{URL: url, PID: os.Getpid()})
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return nil, fmt.Errorf("runtime file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("runtime file: %w", err)
	}
	return func() {
		// Only remove it if it is still ours (another instance may have replaced it).
		if cur, err := readRuntimeFile(env.DataDir); err == nil && cur.PID == os.Getpid() {
			os.Remove(path)
		}
	}, nil
}

func readRuntimeFile(dataDir string) (RuntimeInfo, error) {
	var ri RuntimeInfo
	b, err := os.ReadFile(filepath.Join(dataDir, runtimeFileName))
	if errors.Is(err, os.ErrNotExist) {
		return ri, errors.New("Gatehouse is not running (start it with `gatehouse serve` or open the desktop app)")
	}
	if err != nil {
		return ri, err
	}
	if err := json.Unmarshal(b, &ri); err != nil {
		return ri, fmt.Errorf("runtime file is unreadable: %w", err)
	}
	return ri, nil
}
