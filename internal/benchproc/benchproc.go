// Package benchproc measures one child process for the benchmarks that
// compare Gatehouse with script(1): its wall time, its CPU time and its
// peak resident set. It is used only by benchmarks (backend/capture,
// app); it holds no state.
package benchproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Result is what Run measured.
type Result struct {
	// Wall is the time from start to exit.
	Wall time.Duration
	// CPU is user plus system time, with the waited-for descendants.
	CPU time.Duration
	// MaxRSSKiB is the child's peak resident set in KiB.
	MaxRSSKiB int64
}

// Run runs path with args in this process's environment plus env, its
// stdout to out (nil discards it), with a scratch directory tmp for GNU
// time's report. The peak resident set comes from GNU time(1) when it is
// installed: the rusage of a child started by os/exec counts the memory
// of this (much larger) process, whose address space the child shares
// until it executes (vfork), so only a small C parent gives the child's
// own peak.
func Run(tmp string, out io.Writer, env []string, path string, args ...string) (Result, error) {
	var rssFile string
	if gnuTime, err := exec.LookPath("time"); err == nil {
		rssFile = filepath.Join(tmp, "maxrss")
		args = append([]string{"-f", "%M", "-o", rssFile, path}, args...)
		path = gnuTime
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = out, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return Result{}, fmt.Errorf("%s %q: %w\n%s", path, args, err, stderr.String())
	}
	r := Result{Wall: time.Since(start)}
	ps := cmd.ProcessState
	r.CPU = ps.UserTime() + ps.SystemTime()
	r.MaxRSSKiB = ps.SysUsage().(*syscall.Rusage).Maxrss
	if rssFile != "" {
		text, err := os.ReadFile(rssFile)
		if r.MaxRSSKiB, err = strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64); err != nil {
			return Result{}, fmt.Errorf("time(1) wrote %q: %v", text, err)
		}
	}
	return r, nil
}
