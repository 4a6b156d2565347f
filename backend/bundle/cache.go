package bundle

import (
	"crypto/sha256"
	"sync"

	"github.com/gatehouse/gatehouse/backend/internal/contentcache"
)

// maxCachedInspections bounds each of an InspectCache's two caches
// (inspections and manifest parses); past it, the oldest entry is
// forgotten.
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
	once        sync.Once
	inspections *contentcache.Cache[[32]byte, []Issue]        // by contentcache.Key(revision, manifest)
	manifests   *contentcache.Cache[[32]byte, parsedManifest] // by sha256 of execution.json
}

func (c *InspectCache) init() {
	c.once.Do(func() {
		l := contentcache.Limits{MaxEntries: maxCachedInspections}
		c.inspections = contentcache.New[[32]byte, []Issue](l)
		c.manifests = contentcache.New[[32]byte, parsedManifest](l)
	})
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
	c.init()
	p, ok := c.manifests.Get(k)
	if !ok {
		p.m, p.issues, p.unsupported = ParseManifest(raw)
		c.manifests.Add(k, p, 0)
	}
	var m *Manifest
	if p.m != nil {
		cp := *p.m
		m = &cp
	}
	return m, append([]Issue(nil), p.issues...), append([]string(nil), p.unsupported...)
}

func (c *InspectCache) get(k [32]byte) ([]Issue, bool) {
	if c == nil {
		return nil, false
	}
	c.init()
	is, ok := c.inspections.Get(k)
	return append([]Issue(nil), is...), ok
}

func (c *InspectCache) put(k [32]byte, is []Issue) {
	if c == nil {
		return
	}
	c.init()
	c.inspections.Add(k, append([]Issue(nil), is...), 0)
}
