package contentcache

import "crypto/sha256"

// Key is the SHA-256 of context, a NUL byte and content: the key of an
// answer that is a pure function of exactly those two (a skill folder and
// its SKILL.md, a revision and its manifest). context must not contain a
// NUL byte, so that no two pairs share a key.
func Key(context string, content []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte(context))
	h.Write([]byte{0})
	h.Write(content)
	var k [32]byte
	h.Sum(k[:0])
	return k
}
