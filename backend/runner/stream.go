package runner

import (
	"sync"
	"unicode/utf8"
)

// boundedBuffer collects a stream up to a fixed capacity while validating
// UTF-8 incrementally. It never grows past its capacity: the first byte
// beyond it marks the stream as over the limit and calls onOver once;
// later bytes are discarded (the reader keeps draining so the writer never
// blocks). A multi-byte character split across writes is validated once
// its remaining bytes arrive.
type boundedBuffer struct {
	mu      sync.Mutex
	buf     []byte
	limit   int
	over    bool
	bad     bool // invalid UTF-8 seen
	pending []byte
	onOver  func()
}

func newBoundedBuffer(limit int, onOver func()) *boundedBuffer {
	return &boundedBuffer{buf: make([]byte, 0, limit), limit: limit, onOver: onOver}
}

// Write always reports success so io.Copy keeps draining the pipe.
func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n := len(p)
	if b.over {
		b.mu.Unlock()
		return n, nil
	}
	if len(b.buf)+len(p) > b.limit {
		b.over = true
		b.mu.Unlock()
		if b.onOver != nil {
			b.onOver()
		}
		return n, nil
	}
	b.buf = append(b.buf, p...)
	b.validate(p)
	b.mu.Unlock()
	return n, nil
}

// validate checks the new bytes p (after any pending partial rune).
func (b *boundedBuffer) validate(p []byte) {
	if b.bad {
		return
	}
	data := append(b.pending, p...)
	b.pending = nil
	for len(data) > 0 {
		if data[0] < utf8.RuneSelf {
			data = data[1:]
			continue
		}
		if !utf8.FullRune(data) {
			b.pending = append([]byte(nil), data...)
			return
		}
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			b.bad = true
			return
		}
		data = data[size:]
	}
}

// result returns the collected bytes and whether they are complete, valid
// UTF-8 within the limit. Call it after the stream has ended.
func (b *boundedBuffer) result() (data []byte, over, invalidUTF8 bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf, b.over, b.bad || len(b.pending) > 0
}

// size is the number of bytes collected so far.
func (b *boundedBuffer) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf)
}
