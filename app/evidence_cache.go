package app

import (
	"crypto/sha256"
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

// verify is verifyEvidence with the cache in front.
func (c *verifiedCache) verify(data []byte) (EvidenceVerifyResult, []evidenceIssue) {
	sum := sha256.Sum256(data)
	if r, ok := c.get(sum); ok {
		return r, nil
	}
	r, issues := verifyEvidence(data)
	if len(issues) == 0 {
		c.put(sum, r)
	}
	return r, issues
}
