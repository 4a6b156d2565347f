package proctree

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procStat is the part of /proc/PID/stat this package uses.
type procStat struct {
	pid, ppid, pgid, sid int
	state                byte
	startTime            uint64
}

// readStat parses /proc/PID/stat. The command name may contain spaces and
// parentheses, so fields are read after the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, fmt.Errorf("proctree: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	// f[0]=state f[1]=ppid f[2]=pgrp f[3]=session … f[19]=starttime
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("proctree: short /proc/%d/stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	sid, _ := strconv.Atoi(f[3])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procStat{pid: pid, ppid: ppid, pgid: pgid, sid: sid, state: f[0][0], startTime: start}, nil
}

// allPids lists the numeric entries of /proc.
func allPids() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(entries))
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// hasEnv reports whether /proc/PID/environ holds exactly the entry marker
// ("KEY=value"). Unreadable environments (other users, zombies) do not match.
func hasEnv(pid int, marker string) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if string(kv) == marker {
			return true
		}
	}
	return false
}

// live reports whether a process still exists and is not a zombie.
func live(st procStat) bool { return st.state != 'Z' && st.state != 'X' }

// ScanMarked returns the live processes whose environment holds marker
// ("KEY=value"), read from /proc rather than from any bookkeeping.
func ScanMarked(marker string) []int {
	var out []int
	eachLive(func(pid int, _ procStat) {
		if hasEnv(pid, marker) {
			out = append(out, pid)
		}
	})
	return out
}

// ScanKey returns the live processes (other than this one) whose
// environment holds the variable key, each with that variable's value,
// read from /proc rather than from any bookkeeping. Unreadable
// environments (other users, zombies) are not listed.
func ScanKey(key string) map[int]string {
	prefix := key + "="
	out := map[int]string{}
	eachLive(func(pid int, _ procStat) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			return
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			if v, ok := strings.CutPrefix(string(kv), prefix); ok {
				out[pid] = v
				return
			}
		}
	})
	return out
}

// eachLive calls fn for every live process other than this one.
func eachLive(fn func(pid int, st procStat)) {
	pids, _ := allPids()
	for _, pid := range pids {
		if pid == os.Getpid() {
			continue
		}
		if st, err := readStat(pid); err == nil && live(st) {
			fn(pid, st)
		}
	}
}

// SweepStale kills every live process whose environment variable key
// names a path directly below dir whose first component carries the tag
// of an instance that is no longer running (see Stale). Run at start-up,
// it ends the leftovers of a crashed instance even where no cgroup holds
// them. It returns the pids it killed.
func SweepStale(key, dir string) []int {
	prefix := key + "=" + strings.TrimSuffix(dir, "/") + "/"
	var killed []int
	eachLive(func(pid int, _ procStat) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			return
		}
		for _, kv := range bytes.Split(b, []byte{0}) {
			rest, ok := strings.CutPrefix(string(kv), prefix)
			if !ok {
				continue
			}
			name, _, _ := strings.Cut(rest, "/")
			if Stale(name) {
				syscall.Kill(pid, syscall.SIGKILL)
				killed = append(killed, pid)
			}
			break
		}
	})
	return killed
}

// catches reports whether pid has a handler installed for sig (the SigCgt
// mask of /proc/PID/status). Unreadable status counts as not catching.
func catches(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}
