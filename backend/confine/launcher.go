package confine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// launchEnv carries the launch request into the re-executed launcher.
const launchEnv = "GATEHOUSE_CONFINE_LAUNCH"

// ReportFD is the launcher's descriptor for its report: the caller passes
// the write end of a pipe there (after the four protocol descriptors).
// It is closed when the target is executed.
const ReportFD = 4

// maxReport bounds what the parent reads from a launcher.
const maxReport = 64 << 10

// Request is one launch: the target program and what it may touch.
type Request struct {
	Settings Settings `json:"settings"`
	// ReadOnly lists directories the target may read and execute from
	// (the staged snapshot, the runtime's installation, system paths);
	// missing ones are skipped.
	ReadOnly []string `json:"read_only"`
	// ReadWrite lists directories the target may read and change (the
	// workspace, its own HOME and TMPDIR).
	ReadWrite []string `json:"read_write"`
	// NetNamespace says the tree was started in a network namespace of
	// its own; the launcher checks it before counting UDP as denied.
	NetNamespace bool `json:"net_namespace"`
	// ABILimit, when ≥ 0, makes the launcher treat the kernel's Landlock
	// ABI as at most this (a test seam simulating older kernels).
	ABILimit int `json:"abi_limit"`
	// Path, Args and Env are the target's exec.
	Path string   `json:"path"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	// UserNamespace makes the native launcher, first of all, an ordinary
	// user (uid and gid 1000, mapped to its own ids) in a user namespace
	// of its own, so the caller need not clone it into one. The Go
	// launcher does not; MakesUserNamespace says whether this launch will.
	UserNamespace bool `json:"-"`
	// GoLauncher starts the launch through the re-executed Go launcher
	// even where the native one runs (a test seam: both must enforce the
	// same).
	GoLauncher bool `json:"-"`
}

// SystemReadOnly are the system paths a Node runtime needs to read: its
// libraries, /etc for TLS roots, time zones and the resolver.
var systemReadOnly = []string{"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc"}

// SystemReadOnly returns the system directories every confined launch may
// read (a copy).
func SystemReadOnly() []string { return append([]string(nil), systemReadOnly...) }

// devices the target may use: /dev/null read-write (child_process uses it
// for ignored stdio), the random and zero devices read-only.
var devRW, devRO = []string{"/dev/null"}, []string{"/dev/zero", "/dev/urandom", "/dev/random"}

// Command returns how to start the request through the launcher: the
// native launcher (launch.c, embedded, executed from a sealed memory file)
// with the Landlock masks and rules on its command line and the target's
// environment as its own; or, where the native launcher cannot run (another
// architecture, a kernel that forbids executing memory files) or GoLauncher
// is set, this executable (/proc/self/exe) with the request and
// GOMAXPROCS=1 as its only environment.
// The caller gives the started process the descriptors Files returns (the
// protocol descriptors 0–3, the write end of a report pipe as ReportFD,
// and the native launcher), then calls ReadReport.
func (r Request) Command() (path string, args, env []string, err error) {
	if err := r.Settings.Validate(); err != nil {
		return "", nil, nil, err
	}
	if !strings.HasPrefix(r.Path, "/") || len(r.Args) == 0 {
		return "", nil, nil, errors.New("confine: the target needs an absolute path and an argv")
	}
	if r.native() {
		if _, err := nativeLauncher(); err != nil { // checked again by Files
			return "", nil, nil, err
		}
		return nativePath, r.nativeArgs(), r.Env, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return "", nil, nil, err
	}
	// The -test.run argument makes a Go test binary that forgot to call
	// MaybeLaunch run no test (and end without a report, so the launch
	// fails) instead of running its whole suite again.
	// GOMAXPROCS=1: the launcher runs one goroutine and then execs, and
	// every thread the Go runtime starts for idle Ps must be ended by that
	// exec (de_thread), which costs most on a loaded machine. The target
	// never sees this variable: it is executed with Env alone.
	return "/proc/self/exe", []string{"gatehouse-launcher", "-test.run=^$"}, []string{"GOMAXPROCS=1", launchEnv + "=" + string(b)}, nil
}

// launchReply is the launcher's one line on ReportFD: the facts it saw
// (the Landlock ABI, as limited by the request, and whether the network
// namespace is a fresh one) once everything is enforced, or an error.
type launchReply struct {
	ABI         *int   `json:"abi,omitempty"`
	NetNS       bool   `json:"netns,omitempty"`
	Error       string `json:"error,omitempty"`
	Unavailable bool   `json:"unavailable,omitempty"`
}

// ReadReport reads the launcher's report from the read end of its pipe
// until EOF (the target was executed, or the launcher ended). It returns
// what the launch enforced when the target was executed under it (the
// plan of the request's settings for the ABI and network namespace the
// launcher saw), an UnavailableError when the confinement could not be
// enforced, and another error when the launch failed.
func (r Request) ReadReport(rd io.Reader) (*Report, error) {
	b, err := io.ReadAll(io.LimitReader(rd, maxReport))
	if err != nil {
		return nil, fmt.Errorf("confine: read the launcher's report: %w", err)
	}
	var facts *launchReply
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var reply launchReply
		if err := json.Unmarshal([]byte(line), &reply); err != nil {
			return nil, fmt.Errorf("confine: malformed launcher report %q", line)
		}
		switch {
		case reply.Unavailable:
			return nil, &UnavailableError{Reason: reply.Error}
		case reply.Error != "":
			return nil, fmt.Errorf("confine: launcher: %s", reply.Error)
		case reply.ABI != nil:
			facts = &reply
		}
	}
	if facts == nil {
		return nil, errors.New("confine: the launcher ended without a report")
	}
	// The launcher enforced the masks this process computed for its own
	// view of the kernel; they are the plan's only if both saw one ABI.
	if want := limitABI(KernelABI(), r.ABILimit); *facts.ABI != want {
		return nil, fmt.Errorf("confine: the launcher saw Landlock ABI %d, Gatehouse %d", *facts.ABI, want)
	}
	if facts.NetNS != r.NetNamespace {
		return nil, errors.New("confine: the launcher's network namespace report does not match the request")
	}
	return plan(r.Settings, *facts.ABI, facts.NetNS)
}

// MaybeLaunch runs the launcher and never returns when this process was
// started as one (by Request.Command); otherwise it returns at once. Call
// it first thing in main and in TestMain.
func MaybeLaunch() {
	v, ok := os.LookupEnv(launchEnv)
	if !ok {
		return
	}
	// Exec happens from this thread, which holds the Landlock domain and
	// no_new_privs: it is never unlocked.
	runtime.LockOSThread()
	report := os.NewFile(ReportFD, "report")
	reply := func(r launchReply) {
		b, _ := json.Marshal(r)
		report.Write(append(b, '\n'))
	}
	var req Request
	if err := json.Unmarshal([]byte(v), &req); err != nil {
		reply(launchReply{Error: "malformed launch request: " + err.Error()})
		os.Exit(126)
	}
	abi, err := enforce(req)
	if err != nil {
		reply(launchReply{Error: err.Error(), Unavailable: IsUnavailable(err)})
		os.Exit(126)
	}
	reply(launchReply{ABI: &abi, NetNS: req.NetNamespace})
	// The target inherits only 0–3: everything above, the report pipe
	// included, closes on exec.
	if err := unix.CloseRange(ReportFD, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		reply(launchReply{Error: "close_range: " + err.Error()})
		os.Exit(126)
	}
	err = syscall.Exec(req.Path, req.Args, req.Env)
	reply(launchReply{Error: fmt.Sprintf("exec %s: %v", req.Path, err)})
	os.Exit(127)
}

// enforce sets no_new_privs and applies the Landlock ruleset of the
// request on this thread, and returns the ABI it was built for. A network
// namespace that was asked for and is not a fresh one refuses the launch,
// as the native launcher does.
func enforce(req Request) (int, error) {
	if req.NetNamespace && !onlyLoopback() {
		return 0, &UnavailableError{Reason: "the attempt's network namespace is not a fresh one (an interface other than lo is present)"}
	}
	abi := limitABI(KernelABI(), req.ABILimit)
	if _, err := plan(req.Settings, abi, req.NetNamespace); err != nil {
		return 0, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("no_new_privs: %w", err)
	}
	cfg, any := config(req.Settings, abi)
	if !any {
		return abi, nil
	}
	// The native launcher's rules (nativeArgs), through go-landlock.
	var rules []landlock.Rule
	for _, r := range req.pathRules(uint64(cfg.HandledAccessFS)) {
		// A path that must exist and does not is the launch's error, not
		// the kernel's inability (as in the native launcher).
		if _, err := os.Stat(r.path); err != nil && !r.ignoreMissing {
			return 0, fmt.Errorf("open %s: %w", r.path, err)
		}
		rule := landlock.PathAccess(landlock.AccessFSSet(r.access), r.path)
		if r.ignoreMissing {
			rule = rule.IgnoreIfMissing()
		}
		rules = append(rules, rule)
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return 0, &UnavailableError{Reason: "Landlock ruleset: " + err.Error()}
	}
	if fd >= 0 {
		defer unix.Close(fd)
		if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
			return 0, &UnavailableError{Reason: "Landlock restrict_self: " + err.Error()}
		}
	}
	return abi, nil
}

// onlyLoopback reports whether this process's network namespace has no
// interface but lo (so it is a fresh one, with no route anywhere).
func onlyLoopback() bool {
	f, err := os.Open("/proc/self/net/dev")
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		name, _, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue // the two header lines
		}
		if strings.TrimSpace(name) != "lo" {
			return false
		}
		n++
	}
	return n == 1
}

// Harden makes this process non-dumpable, so a process of the same user
// (a script it launched included) cannot read its memory or environment
// through /proc or attach to it with ptrace.
func Harden() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("confine: PR_SET_DUMPABLE: %w", err)
	}
	return nil
}
