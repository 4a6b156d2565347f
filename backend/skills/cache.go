package skills

import (
	"crypto/sha256"
	"maps"
	"sync"

	"github.com/gatehouse/gatehouse/backend/bundle"
)

// Bounds of a DocumentCache (entries, and the bytes of the documents they
// were parsed from, which bound the text they keep); past either, the
// oldest entries are forgotten.
const (
	maxCachedDocuments     = 4096
	maxCachedDocumentBytes = 32 << 20
)

// DocumentCache remembers the parse of skill documents (the YAML
// frontmatter and its checks), keyed by the SHA-256 of the exact bytes
// read and the name the skill is found under. Discovery still reads every
// document on every pass, so any changed byte is parsed again at once;
// only the parse of identical bytes is skipped. The zero value is ready to
// use and safe for concurrent use.
type DocumentCache struct {
	mu    sync.Mutex
	m     map[[32]byte]cachedDocument
	order [][32]byte
	bytes int // sum of the cached documents' sizes
}

type cachedDocument struct {
	p    *parsed
	size int
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
	e, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return e.p.clone()
	}
	p := parseDocument(doc, folder)
	if len(doc) > maxCachedDocumentBytes {
		return p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[32]byte]cachedDocument{}
	}
	if _, dup := c.m[k]; !dup {
		for len(c.order) > 0 && (len(c.order) >= maxCachedDocuments || c.bytes+len(doc) > maxCachedDocumentBytes) {
			c.bytes -= c.m[c.order[0]].size
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
		c.m[k] = cachedDocument{p: p, size: len(doc)}
		c.order = append(c.order, k)
		c.bytes += len(doc)
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
