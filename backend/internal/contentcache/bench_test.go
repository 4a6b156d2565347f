package contentcache

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

func keys(n int) [][32]byte {
	out := make([][32]byte, n)
	for i := range out {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		out[i] = sha256.Sum256(b[:])
	}
	return out
}

// BenchmarkGetHit is one lookup of a stored digest key.
func BenchmarkGetHit(b *testing.B) {
	ks := keys(4096)
	c := New[[32]byte, int](Limits{MaxEntries: 4096})
	for i, k := range ks {
		c.Add(k, i, 0)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := c.Get(ks[i%len(ks)]); !ok {
			b.Fatal("miss")
		}
	}
}

// BenchmarkAddEvicting is one add into a full cache (each evicts the
// oldest entry).
func BenchmarkAddEvicting(b *testing.B) {
	ks := keys(8192)
	c := New[[32]byte, int](Limits{MaxEntries: 4096, MaxBytes: 32 << 20})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Add(ks[i%len(ks)], i, 4096)
	}
}
