package capture

// Command shims (docs/formats/capture-scenario.md, "Command shims").
//
// # Design
//
// For every command_shims entry the capture writes an executable POSIX sh
// script named after the command into a private shim directory
// (<temporary-root>/shims), which becomes the first entry of the target's
// PATH. The script reports each call — the command, its argv[1:] and its
// working directory — to the capture's ledger, receives the decision, and
// replays the route's timed stdout/stderr chunks and its termination.
//
// The target environment holds only the scenario's environment and a
// minimal PATH, so the shim may rely on nothing but /bin/sh: no curl, no
// node, no helper binary (a library cannot re-exec "itself", and shipping
// or building a static helper per platform is more moving parts than the
// problem needs). A POSIX shell cannot speak HTTP with builtins alone
// (dash has no /dev/tcp), so the ledger is not an HTTP server on
// 127.0.0.1: it is a set of named pipes (FIFOs) in a private ledger
// directory (<temporary-root>/shim-ledger, mode 0700) served by one
// goroutine of the capture — the "loopback ledger". The shim uses only the
// sh builtins read, printf, kill, trap and exit plus redirections, all
// present in dash, bash and busybox ash. This deviates from a loopback
// HTTP ledger; the record's limitations say so.
//
// # Protocol
//
// The ledger directory holds a FIFO "grant", a FIFO "request", a regular
// file "current" and, per offered call, a FIFO "call-N". The capture holds
// every FIFO open read-write, so no open by a shim ever blocks.
//
//  1. The ledger offers call N: it creates call-N, writes N to current and
//     writes exactly one byte ("\n") to grant. One byte can be read by
//     exactly one reader, so it is a lock: of all shims blocked reading
//     grant, one takes it; the others keep waiting.
//  2. The shim holding the grant reads N from current, opens call-N for
//     reading (fd 3) and writes its request to request: NUL-terminated
//     fields "gatehouse-shim-1", the capture's random token, N, the
//     command, $PWD, $#, then each argument (arguments cannot hold NUL).
//  3. Once the request is read, the shim has finished with every shared
//     resource, so the ledger decides (exact argv match, max_calls), hands
//     the observation to the recorder, and offers call N+1 (step 1). The
//     decision is streamed on call-N by a goroutine of that call, so slow
//     replays never serialize concurrent calls.
//  4. call-N carries lines: "o<data>" / "e<data>" (stdout / stderr chunk,
//     written at its at_ms after the call was received, data encoded for
//     printf %b: bytes outside printable ASCII and the backslash as \0ooo),
//     then "x<code>" (exit), "k<NAME> <number>" (kill itself with SIGNAME;
//     exit 128+number if the signal is ignored), "u" (unmatched) or "z"
//     (exhausted); the last two exit 127 without writing anything.
//
// A shim never writes a message of its own: its stdout and stderr are the
// target's, and they carry only what routes declare. Every failure (an
// unmatched or exhausted call, an unavailable or stopped ledger) exits 127
// silently and is known from shim_events or the record's limitations.
//
// While it holds the grant the shim defers SIGHUP, SIGINT, SIGQUIT and
// SIGTERM (it re-raises them once the request is written), so an
// interrupted shim does not leave the ledger waiting. SIGKILL cannot be
// deferred: a shim killed in that window of a few shell statements leaves
// the ledger waiting until the capture ends (a known limitation). A request
// that starts but does not complete within shimRequestTimeout, or that
// breaks the protocol, closes the ledger: later calls exit 127 at once,
// and the record says so (a limitation and a "shim" residual unknown).
//
// GATEHOUSE_SHIM_LEDGER_URL is set to the file:// URL of the ledger
// directory, for information; the generated scripts embed the directory
// and the token, so a target that clears its environment before running a
// command still reaches the ledger. The token is never in the environment
// (so it never reaches the record through the target's output); the
// directory's 0700 mode is what keeps other users out.
//
// # Recording
//
// Each call becomes one shim_events entry (ShimEvent) in the order the
// ledger received the calls, with the command, the arguments and the
// working directory normalized and redacted like other recorded text.
// Shim events share the protocol-event budget (the seed: "Shim
// observations are bounded by the scenario protocol-event limit"): once
// len(shim_events)+len(protocol_events) reaches limits.protocol_events,
// later calls are still answered but not recorded, and the capture is
// truncated.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gatehouse/gatehouse/backend/capture/record"
)

// ShimLedgerVariable is the environment variable naming the shim ledger.
const ShimLedgerVariable = "GATEHOUSE_SHIM_LEDGER_URL"

// Shim call outcomes.
const (
	ShimOutcomeMatched   = record.ShimOutcomeMatched
	ShimOutcomeUnmatched = record.ShimOutcomeUnmatched
	ShimOutcomeExhausted = record.ShimOutcomeExhausted
)

// ShimFailureExitCode is the exit code of a shim call that no route
// answers (unmatched or exhausted) or that cannot reach the ledger.
const ShimFailureExitCode = 127

// ShimEvent is one call of a command shim (record.ShimEvent).
type ShimEvent = record.ShimEvent

const (
	shimProtocol = "gatehouse-shim-1"
	// shimRequestTimeout bounds a request once its first byte arrived.
	shimRequestTimeout = 5 * time.Second
	// shimMaxField bounds one request field (the kernel bounds a command
	// line to a few MiB anyway).
	shimMaxField = 16 << 20
	// shimMaxArguments bounds the argument count a request may announce.
	shimMaxArguments = 1 << 20
)

// shimCall is what the ledger tells the recorder: one call, or (with
// problem set) that the ledger closed.
type shimCall struct {
	at      time.Duration // since the session start
	command string
	route   *int
	args    []string
	dir     string
	outcome string
	problem string
}

// ledger is the capture side of the command shims: the shim scripts, the
// FIFOs and the goroutines serving them. Its methods accept a nil
// receiver (a scenario without command shims).
type ledger struct {
	bin, dir, token string
	shims           map[string]CommandShim
	used            map[string][]int // calls answered per route

	grant, request *os.File
	reader         *bufio.Reader
	calls          chan shimCall
	ctx            context.Context
	cancel         context.CancelFunc
	wg             sync.WaitGroup
	once           sync.Once
	start          time.Time
}

// newLedger writes the shim scripts and the ledger FIFOs of sc into
// tempRoot; it returns nil when sc has no command shims.
func newLedger(sc *Scenario, tempRoot string) (*ledger, error) {
	if len(sc.CommandShims) == 0 {
		return nil, nil
	}
	l := &ledger{
		bin: filepath.Join(tempRoot, "shims"), dir: filepath.Join(tempRoot, "shim-ledger"), token: rand.Text(),
		shims: map[string]CommandShim{}, used: map[string][]int{}, calls: make(chan shimCall, 64),
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if err := l.setup(sc); err != nil {
		l.stop()
		return nil, fmt.Errorf("capture: command shims: %w", err)
	}
	return l, nil
}

func (l *ledger) setup(sc *Scenario) error {
	if strings.ContainsRune(l.bin, ':') {
		return fmt.Errorf("the shim directory %q cannot be a PATH entry (it contains ':')", l.bin)
	}
	for _, d := range []string{l.bin, l.dir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	var err error
	if l.grant, err = makeFIFO(filepath.Join(l.dir, "grant")); err != nil {
		return err
	}
	if l.request, err = makeFIFO(filepath.Join(l.dir, "request")); err != nil {
		return err
	}
	l.reader = bufio.NewReader(l.request)
	for _, sh := range sc.CommandShims {
		l.shims[sh.Name] = sh
		l.used[sh.Name] = make([]int, len(sh.Routes))
		if err := os.WriteFile(filepath.Join(l.bin, sh.Name), []byte(shimScript(sh.Name, l.dir, l.token)), 0o700); err != nil {
			return err
		}
	}
	return nil
}

// makeFIFO creates a FIFO and opens it read-write (under the runtime
// poller, so deadlines and Close interrupt blocked I/O).
func makeFIFO(path string) (*os.File, error) {
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return nil, &os.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	return os.OpenFile(path, os.O_RDWR, 0)
}

// environ puts the shim directory first on env's PATH and sets
// ShimLedgerVariable; env stays sorted.
func (l *ledger) environ(env []string) []string {
	if l == nil {
		return env
	}
	path := l.bin
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if rest, ok := strings.CutPrefix(kv, "PATH="); ok {
			if rest != "" {
				path += ":" + rest
			}
			continue
		}
		if !strings.HasPrefix(kv, ShimLedgerVariable+"=") {
			out = append(out, kv)
		}
	}
	out = append(out, "PATH="+path, ShimLedgerVariable+"="+(&url.URL{Scheme: "file", Path: l.dir + "/"}).String())
	sort.Strings(out)
	return out
}

// serve starts answering calls; start is the session's time origin.
func (l *ledger) serve(start time.Time) {
	if l == nil {
		return
	}
	l.start = start
	l.wg.Add(1)
	go l.loop()
}

// notes are the record's limitations about the shims of this capture.
func (l *ledger) notes() []string {
	if l == nil {
		return nil
	}
	return []string{
		"command shims: POSIX sh scripts first on PATH that report to a ledger of named pipes in the temporary root (not a loopback HTTP server), using sh builtins only; calls are serialized only while reported, outputs are replayed by Gatehouse at their at_ms after the call was received",
		"command shims: a shim that runs as a background job of a non-interactive shell ignores SIGINT, so a SIGINT termination ends it with exit code 130 instead",
	}
}

// loop offers calls one after another until the ledger is stopped or
// fails.
func (l *ledger) loop() {
	defer l.wg.Done()
	for n := 0; ; n++ {
		call, err := l.offer(n)
		var req shimRequest
		if err == nil {
			req, err = l.receive(n)
			os.Remove(filepath.Join(l.dir, "call-"+strconv.Itoa(n)))
		}
		if err != nil {
			if call != nil {
				call.Close()
			}
			if l.ctx.Err() == nil {
				l.fail(err)
			}
			return
		}
		received := time.Now()
		c, lines := l.decide(req)
		c.at = received.Sub(l.start)
		l.wg.Add(1)
		go l.replay(call, received, lines)
		l.calls <- c // stop drains calls until every goroutine is done
	}
}

// offer makes call n available and grants the ledger to one shim.
func (l *ledger) offer(n int) (*os.File, error) {
	call, err := makeFIFO(filepath.Join(l.dir, "call-"+strconv.Itoa(n)))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(l.dir, "current"), []byte(strconv.Itoa(n)+"\n"), 0o600); err != nil {
		return call, err
	}
	if _, err := l.grant.Write([]byte{'\n'}); err != nil {
		return call, err
	}
	return call, nil
}

type shimRequest struct {
	command, dir string
	args         []string
}

// receive reads the request of call n.
func (l *ledger) receive(n int) (shimRequest, error) {
	var req shimRequest
	if _, err := l.reader.Peek(1); err != nil {
		return req, err
	}
	l.request.SetReadDeadline(time.Now().Add(shimRequestTimeout))
	defer l.request.SetReadDeadline(time.Time{})
	var fields [6]string
	for i := range fields {
		f, err := l.field()
		if err != nil {
			return req, err
		}
		fields[i] = f
	}
	argc, err := strconv.Atoi(fields[5])
	switch {
	case fields[0] != shimProtocol || fields[1] != l.token:
		return req, errors.New("a request without the protocol marker and token of this capture")
	case fields[2] != strconv.Itoa(n):
		return req, fmt.Errorf("a request for call %q while call %d was offered", fields[2], n)
	case err != nil || argc < 0 || argc > shimMaxArguments:
		return req, fmt.Errorf("a request with argument count %q", fields[5])
	}
	if _, ok := l.shims[fields[3]]; !ok {
		return req, fmt.Errorf("a request for the unknown command %q", fields[3])
	}
	req = shimRequest{command: fields[3], dir: fields[4], args: make([]string, 0, min(argc, 256))}
	for range argc {
		a, err := l.field()
		if err != nil {
			return req, err
		}
		req.args = append(req.args, a)
	}
	return req, nil
}

// field reads one NUL-terminated request field.
func (l *ledger) field() (string, error) {
	var b []byte
	for {
		part, err := l.reader.ReadSlice(0)
		b = append(b, part...)
		if len(b) > shimMaxField {
			return "", fmt.Errorf("a request field longer than %d bytes", shimMaxField)
		}
		switch {
		case err == nil:
			return string(b[:len(b)-1]), nil
		case errors.Is(err, os.ErrDeadlineExceeded):
			return "", fmt.Errorf("a request not completed within %v", shimRequestTimeout)
		case !errors.Is(err, bufio.ErrBufferFull):
			return "", err
		}
	}
}

// decide matches req against its command's routes (first route with
// exactly these arguments and calls left) and returns the observation and
// the lines to send to the shim.
func (l *ledger) decide(req shimRequest) (shimCall, []shimLine) {
	c := shimCall{command: req.command, args: req.args, dir: req.dir, outcome: ShimOutcomeUnmatched}
	sh, used := l.shims[req.command], l.used[req.command]
	first := -1
	for i, r := range sh.Routes {
		if !slices.Equal(r.Arguments, req.args) {
			continue
		}
		if first < 0 {
			first = i
		}
		if used[i] < r.MaxCalls {
			used[i]++
			c.route, c.outcome = &i, ShimOutcomeMatched
			return c, routeLines(r)
		}
	}
	if first >= 0 {
		c.route, c.outcome = &first, ShimOutcomeExhausted
		return c, []shimLine{{text: "z"}}
	}
	return c, []shimLine{{text: "u"}}
}

// shimLine is one line for a shim, due at offset after the call.
type shimLine struct {
	offset time.Duration
	text   string
}

var shimSignals = map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}

// routeLines is a matched route's replay: its outputs ordered by at_ms
// (stable), then its termination right after the last output.
func routeLines(r ShimRoute) []shimLine {
	outs := slices.Clone(r.Outputs)
	slices.SortStableFunc(outs, func(a, b ShimOutput) int { return a.AtMS - b.AtMS })
	lines := make([]shimLine, 0, len(outs)+1)
	var last time.Duration
	for _, o := range outs {
		kind := "o"
		if o.Stream == "stderr" {
			kind = "e"
		}
		last = time.Duration(o.AtMS) * time.Millisecond
		lines = append(lines, shimLine{last, kind + shimEncode(o.Data)})
	}
	end := fmt.Sprintf("x%d", r.Termination.Code)
	if r.Termination.Type == TerminationSignal {
		sig := shimSignals[r.Termination.Signal]
		if sig == 0 {
			sig = syscall.SIGKILL
		}
		end = fmt.Sprintf("k%s %d", strings.TrimPrefix(r.Termination.Signal, "SIG"), int(sig))
	}
	return append(lines, shimLine{last, end})
}

// shimEncode makes s one line printf %b turns back into s: printable
// ASCII except the backslash stays, every other byte becomes \0ooo.
func shimEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '\\' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, `\0%03o`, c)
		}
	}
	return b.String()
}

// replay writes lines to one call's FIFO, each at its offset after
// received; it gives up when the ledger stops.
func (l *ledger) replay(call *os.File, received time.Time, lines []shimLine) {
	defer l.wg.Done()
	defer call.Close()
	stop := context.AfterFunc(l.ctx, func() { call.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	for _, ln := range lines {
		if wait := time.Until(received.Add(ln.offset)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.ctx.Done():
				t.Stop()
				return
			}
		}
		if _, err := call.WriteString(ln.text + "\n"); err != nil {
			return
		}
	}
}

// fail closes the ledger after a protocol failure: grant becomes an
// empty regular file, so every waiting and later shim reads end of file
// and exits 127 at once.
func (l *ledger) fail(err error) {
	grant := filepath.Join(l.dir, "grant")
	os.Remove(grant)
	os.WriteFile(grant, nil, 0o600)
	l.grant.Close()
	l.calls <- shimCall{problem: fmt.Sprintf("command shims: the ledger stopped answering after %v; later shim calls exited %d and were not recorded", err, ShimFailureExitCode)}
}

// stop ends every goroutine of the ledger and closes its files; it
// returns the observations not yet taken from calls. It is idempotent.
func (l *ledger) stop() []shimCall {
	if l == nil {
		return nil
	}
	var rest []shimCall
	l.once.Do(func() {
		l.cancel()
		for _, f := range []*os.File{l.grant, l.request} {
			if f != nil {
				f.Close()
			}
		}
		done := make(chan struct{})
		go func() { l.wg.Wait(); close(done) }()
	drain:
		for {
			select {
			case c := <-l.calls:
				rest = append(rest, c)
			case <-done:
				break drain
			}
		}
		for len(l.calls) > 0 {
			rest = append(rest, <-l.calls)
		}
	})
	return rest
}

// shimCallsOf is the channel of l's observations; nil (never ready in a
// select) without command shims.
func shimCallsOf(l *ledger) <-chan shimCall {
	if l == nil {
		return nil
	}
	return l.calls
}

// shim records one observation of the ledger.
func (r *recorder) shim(c shimCall) {
	if c.problem != "" {
		r.rec.Limitations = append(r.rec.Limitations, c.problem)
		r.rec.ResidualUnknowns = append(r.rec.ResidualUnknowns, ResidualUnknown{Scope: "shim", Reason: "the shim ledger closed during the capture; later calls of the shimmed commands were not observed"})
		return
	}
	if len(r.rec.ShimEvents)+len(r.rec.ProtocolEvents) >= r.limits.ProtocolEvents {
		msg := fmt.Sprintf("shim events exceeded limits.protocol_events (%d); later shim calls were answered but not recorded", r.limits.ProtocolEvents)
		if !slices.Contains(r.rec.Limitations, msg) {
			r.truncate(msg)
		}
		return
	}
	ev := ShimEvent{
		Sequence: len(r.rec.ShimEvents), AtMS: r.norm.ms(ms(c.at)), Command: r.norm.text(c.command), RouteIndex: c.route,
		Arguments: make([]string, len(c.args)), WorkingDirectory: r.norm.text(c.dir), Outcome: c.outcome,
	}
	for i, a := range c.args {
		ev.Arguments[i] = r.norm.text(a)
	}
	b, err := json.Marshal(ev)
	if err != nil { // cannot happen: strings are valid UTF-8 after normalization
		return
	}
	r.rec.ShimEvents = append(r.rec.ShimEvents, b)
	r.journal("shim_events", ev.Sequence)
}

// shimScript is the sh script of command name (see the protocol above).
func shimScript(name, dir, token string) string {
	q := shQuote
	return `#!/bin/sh
# Gatehouse command shim for ` + strconv.Quote(name) + `, generated for one capture.
# It reports this call to the capture's ledger and replays the answer.
d=` + q(dir) + `
s=
trap 's=HUP' HUP
trap 's=INT' INT
trap 's=QUIT' QUIT
trap 's=TERM' TERM
r() {
	trap - HUP INT QUIT TERM
	if [ -n "$s" ]; then kill -s "$s" $$; fi
}
if IFS= read -r g <"$d/grant" && IFS= read -r n <"$d/current"; then :; else
	r
	exit ` + strconv.Itoa(ShimFailureExitCode) + `
fi
{
	printf '%s\0' ` + shimProtocol + ` ` + q(token) + ` "$n" ` + q(name) + ` "$PWD" "$#" "$@" >"$d/request"
	r
	while IFS= read -r l <&3; do
		case $l in
		o*) printf '%b' "${l#?}" ;;
		e*) printf '%b' "${l#?}" >&2 ;;
		x*) exit "${l#?}" ;;
		k*)
			set -- ${l#?}
			kill -s "$1" $$
			exit $((128 + $2))
			;;
		u | z) exit ` + strconv.Itoa(ShimFailureExitCode) + ` ;;
		esac
	done
} 3<"$d/call-$n"
exit ` + strconv.Itoa(ShimFailureExitCode) + `
`
}

// shQuote quotes s for sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
