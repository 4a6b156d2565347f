package skills

import (
	"maps"
	"sync"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/internal/contentcache"
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
	once  sync.Once
	cache *contentcache.Cache[[32]byte, *parsed] // sized by the document's bytes
}

func (c *DocumentCache) entries() *contentcache.Cache[[32]byte, *parsed] {
	c.once.Do(func() {
		c.cache = contentcache.New[[32]byte, *parsed](contentcache.Limits{MaxEntries: maxCachedDocuments, MaxBytes: maxCachedDocumentBytes})
	})
	return c.cache
}

// parse is parseDocument, remembered by content. Each caller gets its own
// copy, so a caller may append to or change what it gets.
func (c *DocumentCache) parse(doc []byte, folder string) *parsed {
	if c == nil {
		return parseDocument(doc, folder)
	}
	k := contentcache.Key(folder, doc)
	if p, ok := c.entries().Get(k); ok {
		return p.clone()
	}
	p := parseDocument(doc, folder)
	c.entries().Add(k, p, int64(len(doc))) // a document over the byte bound is not kept
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
