package skills

import (
	"crypto/sha256"
	"maps"
	"sync"

	"github.com/gatehouse/gatehouse/backend/bundle"
)

// maxCachedDocuments bounds a DocumentCache; past it, the oldest entry is
// forgotten.
const maxCachedDocuments = 4096

// DocumentCache remembers the parse of skill documents (the YAML
// frontmatter and its checks), keyed by the SHA-256 of the exact bytes
// read and the name the skill is found under. Discovery still reads every
// document on every pass, so any changed byte is parsed again at once;
// only the parse of identical bytes is skipped. The zero value is ready to
// use and safe for concurrent use.
type DocumentCache struct {
	mu    sync.Mutex
	m     map[[32]byte]*parsed
	order [][32]byte
}

func documentKey(doc []byte, folder string) [32]byte {
	h := sha256.New()
	h.Write([]byte(folder))
	h.Write([]byte{0})
	h.Write(doc)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// parse is parseDocument, remembered by content. Each caller gets its own
// copy, so a caller may append to or change what it gets.
func (c *DocumentCache) parse(doc []byte, folder string) *parsed {
	if c == nil {
		return parseDocument(doc, folder)
	}
	k := documentKey(doc, folder)
	c.mu.Lock()
	p, ok := c.m[k]
	c.mu.Unlock()
	if !ok {
		p = parseDocument(doc, folder)
		c.mu.Lock()
		if c.m == nil {
			c.m = map[[32]byte]*parsed{}
		}
		if _, dup := c.m[k]; !dup {
			if len(c.order) >= maxCachedDocuments {
				delete(c.m, c.order[0])
				c.order = c.order[1:]
			}
			c.m[k] = p
			c.order = append(c.order, k)
		}
		c.mu.Unlock()
	}
	return p.clone()
}

func (p *parsed) clone() *parsed {
	cp := *p
	cp.fm.Metadata = maps.Clone(p.fm.Metadata)
	cp.fm.AllowedTools = append([]string(nil), p.fm.AllowedTools...)
	cp.unknown = append([]UnknownField(nil), p.unknown...)
	cp.errors = append([]bundle.Issue(nil), p.errors...)
	cp.warnings = append([]bundle.Issue(nil), p.warnings...)
	return &cp
}
