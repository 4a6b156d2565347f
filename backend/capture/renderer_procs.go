package capture

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// RendererMarkerVariable is the environment variable every renderer helper
// runs with: GATEHOUSE_RENDERER=<pid of the Gatehouse process that started
// it>.<start time>. It marks the helper as Gatehouse's in /proc, so a
// person (through `gatehouse doctor`) can tell a helper from any other
// Node process and see which Gatehouse process it belongs to.
const RendererMarkerVariable = "GATEHOUSE_RENDERER"

// RendererProcess is one live renderer helper found in /proc: the pinned
// Node running Gatehouse's embedded xterm.js renderer, either idle
// (started ahead of the next capture by Renderers) or rendering a
// capture or an asciicast import.
type RendererProcess struct {
	PID int
	// OwnerPID is the Gatehouse process that started it (0 when the
	// marker's value does not say); OwnerAlive whether that process still
	// exists.
	OwnerPID   int
	OwnerAlive bool
	// RSSKiB is its resident set (VmRSS), 0 when it could not be read.
	RSSKiB int64
}

// LiveRenderers lists the live renderer helpers of every Gatehouse
// process of this user, by pid, read from /proc (a helper's environment
// holds RendererMarkerVariable); processes whose environment cannot be
// read are not listed.
func LiveRenderers() []RendererProcess {
	var out []RendererProcess
	for pid, v := range proctree.ScanKey(RendererMarkerVariable) {
		p := RendererProcess{PID: pid, RSSKiB: vmRSS(pid)}
		if owner, _, ok := strings.Cut(v, "."); ok {
			if n, err := strconv.Atoi(owner); err == nil && n > 0 {
				p.OwnerPID = n
				_, err := os.Stat(fmt.Sprintf("/proc/%d", n))
				p.OwnerAlive = err == nil
			}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// vmRSS reads VmRSS (kB) from /proc/PID/status; 0 when unreadable.
func vmRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			n, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return n
		}
	}
	return 0
}
