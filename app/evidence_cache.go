package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// verifiedCache remembers the last few Evidence files that passed full
// verification, by the SHA-256 of their exact bytes. Verification is a
// pure function of those bytes, so a file whose digest is listed has
// already passed it; reading it again costs one hash instead of a parse
// and a record check (seconds for a 10 MB capture). A file that changed
// in any byte has another digest and is verified again in full.
type verifiedCache struct {
	mu    sync.Mutex
	order [][sha256.Size]byte
	res   map[[sha256.Size]byte]EvidenceVerifyResult
}

// verifiedCacheSize is how many verified files are remembered.
const verifiedCacheSize = 8

func (c *verifiedCache) get(sum [sha256.Size]byte) (EvidenceVerifyResult, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.res[sum]
	return r, ok
}

func (c *verifiedCache) put(sum [sha256.Size]byte, r EvidenceVerifyResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.res == nil {
		c.res = map[[sha256.Size]byte]EvidenceVerifyResult{}
	}
	if _, ok := c.res[sum]; ok {
		return
	}
	if len(c.order) == verifiedCacheSize {
		delete(c.res, c.order[0])
		c.order = c.order[1:]
	}
	c.order = append(c.order, sum)
	c.res[sum] = r
}

// verifiedMarkNamespace is the settings namespace of the verification
// marks: per saved Evidence id, the SHA-256 of the exact bytes that last
// passed full verification and the verifier (this executable's digest)
// that checked them.
//
// Why a mark is as good as a new check: verification is a pure function
// of the file's bytes and of the verifier's code. A saved file whose
// bytes hash to the marked digest, read by the same executable, would
// pass again; any changed byte (or another build of Gatehouse) means a
// full verification. The mark lives in the data directory's database,
// the same store that holds the execution policy and trust rules, so
// whoever could forge a mark could already change what Gatehouse allows.
// The cost of a read of a marked 10 MB capture drops from a strict parse
// and a record check (about 0.6 s of CPU) to one SHA-256 (about 20 ms).
const verifiedMarkNamespace = "evidence.verified"

type verifiedMark struct {
	SHA256   string               `json:"sha256"`
	Verifier string               `json:"verifier"`
	Result   EvidenceVerifyResult `json:"result"`
}

// verifierDigest identifies the code that verifies: the SHA-256 of this
// executable, computed once. "" (the executable cannot be read) turns
// marks off: every read is then verified in full.
type verifierDigest struct {
	once sync.Once
	hex  string
}

// runningExecutable is the file this process was started from: the
// kernel's link to the running image, which stays that image when a
// package upgrade renames another build over its path (os.Executable
// names the path, and opening it would hash the new build, so old code's
// marks would carry the new build's digest). Where there is no /proc,
// marks are off.
const runningExecutable = "/proc/self/exe"

func (v *verifierDigest) id() string {
	v.once.Do(func() {
		fh, err := os.Open(runningExecutable)
		if err != nil {
			return
		}
		defer fh.Close()
		h := sha256.New()
		if _, err := io.Copy(h, fh); err != nil {
			return
		}
		v.hex = hex.EncodeToString(h.Sum(nil))
	})
	return v.hex
}

// verifySaved verifies the bytes of the saved Evidence id: through the
// in-memory cache, then the id's verification mark, then in full. A full
// verification that passes with evidence_id == id marks the file.
func (f *Facade) verifySaved(ctx context.Context, id string, data []byte) (EvidenceVerifyResult, []evidenceIssue) {
	return f.verifySavedSum(ctx, id, data, sha256.Sum256(data))
}

// verifySavedSum is verifySaved for a caller that already has the
// SHA-256 of data.
func (f *Facade) verifySavedSum(ctx context.Context, id string, data []byte, sum [sha256.Size]byte) (EvidenceVerifyResult, []evidenceIssue) {
	if r, ok := f.verified.get(sum); ok && r.EvidenceID == id {
		return r, nil
	}
	verifier := f.env.verifier.id()
	if m, ok := f.readMark(ctx, id); ok && verifier != "" && m.Verifier == verifier && m.SHA256 == hex.EncodeToString(sum[:]) && m.Result.EvidenceID == id {
		f.verified.put(sum, m.Result)
		return m.Result, nil
	}
	r, issues := f.verifyOnce(sum, data)
	if len(issues) > 0 {
		return r, issues
	}
	f.verified.put(sum, r)
	if r.EvidenceID == id {
		f.markVerified(ctx, sum, r)
	}
	return r, nil
}

// markVerified records that the bytes with digest sum passed full
// verification with result r (saved under r.EvidenceID).
func (f *Facade) markVerified(ctx context.Context, sum [sha256.Size]byte, r EvidenceVerifyResult) {
	f.env.markVerified(ctx, sum, r)
}

// markVerified records that the bytes with digest sum passed full
// verification with result r (saved under r.EvidenceID), checked by this
// executable. A mark that cannot be written only costs a full
// verification on a later read.
func (e *Env) markVerified(ctx context.Context, sum [sha256.Size]byte, r EvidenceVerifyResult) {
	verifier := e.verifier.id()
	if verifier == "" {
		return
	}
	r.Attestation = nil
	b, err := json.Marshal(verifiedMark{SHA256: hex.EncodeToString(sum[:]), Verifier: verifier, Result: r})
	if err == nil {
		err = e.DB.Put(ctx, verifiedMarkNamespace, r.EvidenceID, b)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "gatehouse: warning: the verification of %s is not remembered: %v\n", r.EvidenceID, err)
	}
}

func (f *Facade) readMark(ctx context.Context, id string) (verifiedMark, bool) {
	raw, err := f.env.DB.Get(ctx, verifiedMarkNamespace, id)
	if err != nil {
		return verifiedMark{}, false
	}
	var m verifiedMark
	if json.Unmarshal(raw, &m) != nil {
		return verifiedMark{}, false
	}
	return m, true
}

// forgetMark removes the verification mark of id (its file is deleted).
func (f *Facade) forgetMark(ctx context.Context, id string) error {
	return f.env.DB.Delete(ctx, verifiedMarkNamespace, id)
}

// inflight is one full verification in progress; others asking for the
// same bytes wait for its answer instead of verifying them again.
type inflight struct {
	done   chan struct{}
	res    EvidenceVerifyResult
	issues []evidenceIssue
}

// verifyOnce runs verifyEvidence for data, or waits for the run already
// verifying the same bytes.
func (f *Facade) verifyOnce(sum [sha256.Size]byte, data []byte) (EvidenceVerifyResult, []evidenceIssue) {
	f.pre.mu.Lock()
	if f.pre.inflight == nil {
		f.pre.inflight = map[[sha256.Size]byte]*inflight{}
	}
	if w, ok := f.pre.inflight[sum]; ok {
		f.pre.mu.Unlock()
		<-w.done
		return w.res, w.issues
	}
	w := &inflight{done: make(chan struct{})}
	f.pre.inflight[sum] = w
	f.pre.mu.Unlock()
	w.res, w.issues = verifyEvidence(data)
	f.pre.mu.Lock()
	delete(f.pre.inflight, sum)
	f.pre.mu.Unlock()
	close(w.done)
	return w.res, w.issues
}

// preverifyCount is how many of the newest listed files are verified
// ahead of being opened.
const preverifyCount = 8

// preverifier verifies, in the background, the newest library files
// that have no verification mark of this executable yet (a capture an
// agent or the CLI made, or any file after an upgrade), so that opening
// one is a hash instead of a parse. It is the same verification
// GetEvidence runs, only earlier; a file that fails is left unmarked and
// GetEvidence reports it when it is opened. Its zero value is ready.
type preverifier struct {
	mu       sync.Mutex
	running  bool
	inflight map[[sha256.Size]byte]*inflight
	wg       sync.WaitGroup
}

// preverify starts verifying the unmarked files among ids (newest
// first), unless a sweep is already running.
func (f *Facade) preverify(ids []string) {
	if len(ids) > preverifyCount {
		ids = ids[:preverifyCount]
	}
	p := &f.pre
	p.mu.Lock()
	if p.running || f.ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	p.running = true
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			p.running = false
			p.mu.Unlock()
		}()
		verifier := f.env.verifier.id()
		if verifier == "" {
			return
		}
		for _, id := range ids {
			if f.ctx.Err() != nil {
				return
			}
			if m, ok := f.readMark(f.ctx, id); ok && m.Verifier == verifier {
				continue // marked by this executable (a changed file is caught when opened)
			}
			data, err := readBounded(f.evidencePath(id), MaxImportBytes)
			if err != nil {
				continue
			}
			f.verifySaved(f.ctx, id, data)
		}
	}()
}

// stop waits for a running sweep (the facade's context is cancelled
// first, so it ends after the file it is verifying).
func (p *preverifier) stop() {
	p.wg.Wait()
}
