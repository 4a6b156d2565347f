package library

import (
	"context"
	"crypto/sha256"
	"sync"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// preverifyCount is how many of the newest listed files Preverify
// verifies ahead of their being opened.
const preverifyCount = 8

// preverifier verifies, in the background, the newest library files
// that have no verification mark of this executable yet (a capture an
// agent or the CLI made, or any file after an upgrade), so that opening
// one is a hash instead of a parse. Its zero value is ready.
type preverifier struct {
	mu       sync.Mutex
	running  bool
	inflight map[[sha256.Size]byte]*inflight
	wg       sync.WaitGroup
}

// Preverify starts verifying, in the background, the files among ids
// (newest first, at most preverifyCount) that have no mark of this
// verifier, unless a sweep is already running or ctx is done. It is the
// same verification Open runs, only earlier; a file that fails is left
// unmarked and Open reports it when it is opened. The sweep ends after
// the file it is verifying once ctx is done; Wait waits for it. An id
// that is not an evidence id is skipped: nothing outside the library's
// evidence directory is read.
func (l *Library) Preverify(ctx context.Context, ids []string) {
	if len(ids) > preverifyCount {
		ids = ids[:preverifyCount]
	}
	p := &l.pre
	p.mu.Lock()
	if p.running || ctx.Err() != nil {
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
		verifier := l.verifier()
		if verifier == "" {
			return
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return
			}
			if !evidence.ValidID(id) {
				// an index row that names no evidence id (a damaged or
				// foreign index) would make Path reach outside the
				// library; Open refuses such an id the same way
				continue
			}
			if m, ok := l.ReadMark(ctx, id); ok && m.Verifier == verifier {
				continue // marked by this executable (a changed file is caught when opened)
			}
			data, err := ReadBounded(l.Path(id), evidence.MaxEnvelopeBytes)
			if err != nil {
				continue
			}
			l.VerifySaved(ctx, id, data)
		}
	}()
}
