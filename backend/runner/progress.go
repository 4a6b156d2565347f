package runner

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Progress channel bounds (fd 3).
const (
	MaxProgressLinesPerSecond = 64
	MaxProgressBytes          = 16 << 10
	maxProgressMessage        = 200
)

// Progress is one accepted progress report from a script.
type Progress struct {
	Completed int64  `json:"completed"`
	Total     *int64 `json:"total,omitempty"`
	Message   string `json:"message,omitempty"`
}

// ProgressSummary is what the envelope says about the progress channel.
type ProgressSummary struct {
	Completed int64  `json:"completed"`
	Total     *int64 `json:"total,omitempty"`
	Lines     int    `json:"lines"`
	Dropped   int    `json:"dropped"`
}

// progressReader reads JSON lines from fd 3. Lines beyond
// MaxProgressLinesPerSecond in a one-second window, malformed lines and
// everything after MaxProgressBytes are dropped and counted.
type progressReader struct {
	mu     sync.Mutex
	sum    ProgressSummary
	seen   bool
	emit   func(Progress)
	now    func() time.Time
	window time.Time
	inWin  int
}

func (p *progressReader) run(r io.Reader) {
	br := bufio.NewReaderSize(io.LimitReader(r, MaxProgressBytes), 4096)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			p.drop()
			for err == bufio.ErrBufferFull { // skip the rest of an over-long line
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if len(line) > 0 && (err == nil || err == io.EOF) {
			p.accept(line)
		}
		if err != nil {
			break
		}
	}
	io.Copy(io.Discard, r) // past the byte limit: keep draining, ignore
}

func (p *progressReader) drop() {
	p.mu.Lock()
	p.sum.Dropped++
	p.mu.Unlock()
}

func (p *progressReader) accept(line []byte) {
	var msg struct {
		Type      string  `json:"type"`
		Completed *int64  `json:"completed"`
		Total     *int64  `json:"total"`
		Message   *string `json:"message"`
	}
	if err := json.Unmarshal(line, &msg); err != nil || msg.Type != "progress" || msg.Completed == nil || *msg.Completed < 0 ||
		(msg.Total != nil && (*msg.Total < 0 || *msg.Total < *msg.Completed)) {
		p.drop()
		return
	}
	now := p.now()
	p.mu.Lock()
	if now.Sub(p.window) >= time.Second {
		p.window, p.inWin = now, 0
	}
	if p.inWin >= MaxProgressLinesPerSecond {
		p.sum.Dropped++
		p.mu.Unlock()
		return
	}
	p.inWin++
	pr := Progress{Completed: *msg.Completed, Total: msg.Total}
	if msg.Message != nil {
		pr.Message = truncateRunes(*msg.Message, maxProgressMessage)
	}
	p.sum.Completed, p.sum.Total, p.seen = pr.Completed, pr.Total, true
	p.sum.Lines++
	emit := p.emit
	p.mu.Unlock()
	if emit != nil {
		emit(pr)
	}
}

func (p *progressReader) summary() *ProgressSummary {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen && p.sum.Dropped == 0 {
		return nil
	}
	s := p.sum
	return &s
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}
