package artifact

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"sort"
)

// revisionDomain separates Gatehouse revisions from every other use of
// SHA-256 and versions the framing.
const revisionDomain = "gatehouse.artifact.revision.v1\x00"

// revisionOf hashes a framed encoding of every file: the domain string,
// the file count, then for each file in byte order of its path the path's
// length and bytes and the content's length and bytes (lengths as 8-byte
// big-endian). Length framing makes the encoding unambiguous, sorting makes
// it independent of capture order, and only bundle-relative paths enter it,
// so the same bytes in two folders have the same revision.
func revisionOf(files []File) string {
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	h.Write([]byte(revisionDomain))
	writeLen(h, len(sorted))
	for _, f := range sorted {
		writeLen(h, len(f.Path))
		h.Write([]byte(f.Path))
		writeLen(h, len(f.data))
		h.Write(f.data)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

func writeLen(h hash.Hash, n int) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}
