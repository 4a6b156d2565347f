package contentcache

import (
	"fmt"
	"sync"
	"testing"
)

// At MaxEntries every entry stays; one past it, exactly the oldest one
// added goes, and a hit does not save an entry from eviction (FIFO).
func TestEntriesBoundAtAndOnePast(t *testing.T) {
	c := New[int, string](Limits{MaxEntries: 3})
	for i := 0; i < 3; i++ {
		if !c.Add(i, fmt.Sprint(i), 0) {
			t.Fatalf("add %d refused", i)
		}
	}
	if c.Len() != 3 {
		t.Fatalf("at the bound: %d entries", c.Len())
	}
	for i := 0; i < 3; i++ {
		if v, ok := c.Get(i); !ok || v != fmt.Sprint(i) {
			t.Fatalf("at the bound, %d: %q %v", i, v, ok)
		}
	}
	c.Get(0) // a hit does not refresh
	c.Add(3, "3", 0)
	if c.Len() != 3 {
		t.Fatalf("one past the bound: %d entries", c.Len())
	}
	if _, ok := c.Get(0); ok {
		t.Error("the oldest entry outlived the bound")
	}
	for i := 1; i <= 3; i++ {
		if _, ok := c.Get(i); !ok {
			t.Errorf("entry %d was evicted instead of the oldest", i)
		}
	}
}

// At MaxBytes every entry stays; one byte past it, the oldest entries go
// until the new one fits; an entry larger than the bound alone is never
// stored and evicts nothing.
func TestBytesBoundAtAndOnePast(t *testing.T) {
	c := New[string, int](Limits{MaxEntries: 100, MaxBytes: 10})
	c.Add("a", 1, 4)
	c.Add("b", 2, 6)
	if c.Bytes() != 10 || c.Len() != 2 {
		t.Fatalf("at the bound: %d bytes, %d entries", c.Bytes(), c.Len())
	}
	if !c.Add("c", 3, 1) {
		t.Fatal("a small entry one byte past the bound was refused")
	}
	if _, ok := c.Get("a"); ok {
		t.Error("one byte past the bound, the oldest entry stayed")
	}
	if c.Bytes() != 7 || c.Len() != 2 {
		t.Errorf("after eviction: %d bytes, %d entries", c.Bytes(), c.Len())
	}
	if !c.Add("exact", 4, 10) {
		t.Fatal("an entry of exactly MaxBytes was refused")
	}
	if c.Len() != 1 || c.Bytes() != 10 {
		t.Errorf("an entry of MaxBytes leaves only itself: %d entries, %d bytes", c.Len(), c.Bytes())
	}
	if c.Add("huge", 5, 11) {
		t.Error("an entry larger than MaxBytes was stored")
	}
	if _, ok := c.Get("exact"); !ok || c.Bytes() != 10 {
		t.Error("an entry too large to store evicted another")
	}
}

// The first answer for a key stays: adding it again changes nothing,
// neither the value nor the order nor the byte count.
func TestFirstAnswerStays(t *testing.T) {
	c := New[string, string](Limits{MaxEntries: 2, MaxBytes: 100})
	c.Add("k", "first", 5)
	if c.Add("k", "second", 50) {
		t.Error("a second answer for the same key was stored")
	}
	if v, _ := c.Get("k"); v != "first" || c.Bytes() != 5 || c.Len() != 1 {
		t.Errorf("after a second add: %q, %d bytes, %d entries", v, c.Bytes(), c.Len())
	}
}

// Out-of-range limits are brought into range rather than making a cache
// that stores nothing or never evicts.
func TestLimitsNormalised(t *testing.T) {
	c := New[int, int](Limits{MaxEntries: 0, MaxBytes: -1})
	c.Add(1, 1, 1<<40)
	c.Add(2, 2, 1<<40)
	if c.Len() != 1 {
		t.Errorf("MaxEntries 0 is 1: %d entries", c.Len())
	}
	if _, ok := c.Get(2); !ok {
		t.Error("a negative MaxBytes is unbounded")
	}
}

// Concurrent adds and gets keep both bounds (run with -race).
func TestConcurrentUseKeepsBounds(t *testing.T) {
	c := New[int, int](Limits{MaxEntries: 16, MaxBytes: 64})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				k := (g*7919 + i) % 97
				if v, ok := c.Get(k); ok && v != k {
					t.Errorf("key %d holds %d", k, v)
					return
				}
				c.Add(k, k, int64(k%9))
				if n, b := c.Len(), c.Bytes(); n > 16 || b > 64 {
					t.Errorf("bounds broken: %d entries, %d bytes", n, b)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}
