package confine

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// KernelABI is the Landlock ABI version this kernel offers (0: none).
func KernelABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// maxKnownABI is the newest ABI this package builds rulesets for.
const maxKnownABI = 7

// plan decides, from the settings, the ABI and whether the tree has a
// network namespace of its own, what a launch enforces; it returns an
// UnavailableError when the settings cannot be met. The launcher and the
// up-front check share it, so they cannot disagree.
func plan(s Settings, abi int, netns bool) (*Report, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r := &Report{Filesystem: s.Filesystem, Network: s.Network, ABI: abi, Enforced: []string{}, NotEnforced: []string{}}
	mark := func(feature string, on bool) {
		if on {
			r.Enforced = append(r.Enforced, feature)
		} else {
			r.NotEnforced = append(r.NotEnforced, feature)
		}
	}
	confining := s.Filesystem == FilesystemWorkspace || s.Network == NetworkDeny
	if s.Filesystem == FilesystemWorkspace && abi < 1 {
		return nil, &UnavailableError{Reason: "this kernel has no Landlock, so filesystem confinement cannot be enforced (choose filesystem \"off\" to run with full trust)"}
	}
	if s.Network == NetworkDeny && !netns && abi < 4 {
		return nil, &UnavailableError{Reason: fmt.Sprintf("neither a network namespace nor Landlock ABI 4 (this kernel: %d) is available, so network access cannot be denied (choose network \"allow\" to run with full trust)", abi)}
	}
	mark(Filesystem, s.Filesystem == FilesystemWorkspace)
	mark(TCP, s.Network == NetworkDeny)
	mark(UDP, s.Network == NetworkDeny && netns)
	mark(Signals, confining && abi >= 6)
	mark(AbstractUnixSockets, confining && abi >= 6)
	return r, nil
}

// Check reports, before any launch, what a launch with these settings
// would enforce on this kernel (abiLimit < 0: no limit; otherwise the
// ABI is taken as at most abiLimit, a test seam for older kernels), or
// why it would be refused.
func Check(s Settings, netns bool, abiLimit int) (*Report, error) {
	return plan(s, limitABI(KernelABI(), abiLimit), netns)
}

func limitABI(abi, limit int) int {
	if limit >= 0 && abi > limit {
		abi = limit
	}
	return abi
}

// config is the Landlock configuration of a plan: the handled rights of
// ABI min(abi, maxKnownABI), restricted to what the settings confine.
func config(s Settings, abi int) (landlock.Config, bool) {
	versions := []landlock.Config{landlock.V1, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}
	v := min(abi, maxKnownABI)
	if v < 1 {
		return landlock.Config{}, false
	}
	full := versions[v]
	var c landlock.Config
	if s.Filesystem == FilesystemWorkspace {
		c.HandledAccessFS = full.HandledAccessFS
	}
	if s.Network == NetworkDeny {
		c.HandledAccessNet = full.HandledAccessNet
	}
	if s.Filesystem == FilesystemWorkspace || s.Network == NetworkDeny {
		c.Scoped = full.Scoped
	}
	return c, c.HandledAccessFS != 0 || c.HandledAccessNet != 0 || c.Scoped != 0
}
