package bundle

import (
	"crypto/sha256"
	"sync"
)

// maxCachedInspections bounds an InspectCache; past it, the oldest entry
// is forgotten.
const maxCachedInspections = 4096

// InspectCache remembers the part of an inspection that depends only on
// the captured bytes (the import scan and the schema compilation), keyed
// by the snapshot's revision and the manifest bytes it was parsed from.
// Any changed byte of SKILL.md, execution.json or a declared file changes
// the key, so a changed file is inspected again at once; everything that
// does not depend on the bytes (the file capture itself, the runtime
// check) is redone every time. The zero value is ready to use and safe
// for concurrent use.
type InspectCache struct {
	mu    sync.Mutex
	m     map[[32]byte][]Issue
	order [][32]byte

	manifests map[[32]byte]parsedManifest // by sha256 of execution.json
	morder    [][32]byte
}

// parsedManifest is ParseManifest's answer for one execution.json.
type parsedManifest struct {
	m           *Manifest
	issues      []Issue
	unsupported []string
}

// parseManifest is ParseManifest, remembered by the exact bytes. Each
// caller gets its own copy of the Manifest value.
func (c *InspectCache) parseManifest(raw []byte) (*Manifest, []Issue, []string) {
	if c == nil {
		return ParseManifest(raw)
	}
	k := sha256.Sum256(raw)
	c.mu.Lock()
	p, ok := c.manifests[k]
	c.mu.Unlock()
	if !ok {
		p.m, p.issues, p.unsupported = ParseManifest(raw)
		c.mu.Lock()
		if c.manifests == nil {
			c.manifests = map[[32]byte]parsedManifest{}
		}
		if len(c.morder) >= maxCachedInspections {
			delete(c.manifests, c.morder[0])
			c.morder = c.morder[1:]
		}
		if _, dup := c.manifests[k]; !dup {
			c.manifests[k] = p
			c.morder = append(c.morder, k)
		}
		c.mu.Unlock()
	}
	var m *Manifest
	if p.m != nil {
		cp := *p.m
		m = &cp
	}
	return m, append([]Issue(nil), p.issues...), append([]string(nil), p.unsupported...)
}

func cacheKey(revision string, manifest []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(revision))
	h.Write([]byte{0})
	h.Write(manifest)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (c *InspectCache) get(k [32]byte) ([]Issue, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	is, ok := c.m[k]
	return append([]Issue(nil), is...), ok
}

func (c *InspectCache) put(k [32]byte, is []Issue) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[32]byte][]Issue{}
	}
	if _, ok := c.m[k]; ok {
		return
	}
	if len(c.order) >= maxCachedInspections {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
	c.m[k] = append([]Issue(nil), is...)
	c.order = append(c.order, k)
}
