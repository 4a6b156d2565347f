package consent

import (
	"math"
	"sync"
	"time"
)

// Clock gives wall time for display and a monotonic reading for windows.
// Wall-clock changes never move the monotonic reading. AfterMono lets a
// waiter sleep until a window closes on this clock (which need not run at
// the speed of real timers) instead of polling it.
type Clock interface {
	Wall() time.Time
	Mono() time.Duration
	// AfterMono returns a channel closed once Mono() has reached at (at
	// once when it already has) and a function that releases the timer
	// early; calling it after the channel closed does nothing.
	AfterMono(at time.Duration) (<-chan struct{}, func())
}

type systemClock struct{ start time.Time }

// SystemClock returns the real clock (monotonic readings from time.Since,
// timers from time.AfterFunc).
func SystemClock() Clock { return systemClock{start: time.Now()} }

func (c systemClock) Wall() time.Time     { return time.Now() }
func (c systemClock) Mono() time.Duration { return time.Since(c.start) }

func (c systemClock) AfterMono(at time.Duration) (<-chan struct{}, func()) {
	return afterReal(at - c.Mono())
}

// afterReal is AfterMono for a clock whose monotonic reading runs at the
// speed of real timers: d is the real time left.
func afterReal(d time.Duration) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	if d <= 0 {
		close(ch)
		return ch, func() {}
	}
	t := time.AfterFunc(d, func() { close(ch) })
	return ch, func() { t.Stop() }
}

// ScaledClock returns a clock whose monotonic reading runs factor times
// faster than real's (wall time stays real's), so a test build can watch
// a five-minute window pass in seconds. Its timers fire no earlier than
// the scaled reading reaches their deadline. factor must be positive.
func ScaledClock(real Clock, factor float64) Clock { return scaledClock{real: real, factor: factor} }

type scaledClock struct {
	real   Clock
	factor float64
}

func (c scaledClock) Wall() time.Time { return c.real.Wall() }
func (c scaledClock) Mono() time.Duration {
	return time.Duration(float64(c.real.Mono()) * c.factor)
}

func (c scaledClock) AfterMono(at time.Duration) (<-chan struct{}, func()) {
	// Round up, and a microsecond more, so float rounding never fires the
	// timer before Mono() reads at.
	return c.real.AfterMono(time.Duration(math.Ceil(float64(at)/c.factor)) + time.Microsecond)
}

// ManualClock is a Clock that moves only when Advance is called, for tests
// and test builds: wall and monotonic time move independently, and
// AfterMono's channels close inside the Advance that reaches them, so a
// test can end a window without real sleeping. It is safe for concurrent
// use.
type ManualClock struct {
	mu      sync.Mutex
	wall    time.Time
	mono    time.Duration
	waiters map[*manualWaiter]struct{}
}

type manualWaiter struct {
	at time.Duration
	ch chan struct{}
}

// NewManualClock returns a ManualClock reading wall and a monotonic zero.
func NewManualClock(wall time.Time) *ManualClock { return &ManualClock{wall: wall} }

// Wall returns the wall time set so far.
func (c *ManualClock) Wall() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.wall }

// Mono returns the monotonic reading advanced so far.
func (c *ManualClock) Mono() time.Duration { c.mu.Lock(); defer c.mu.Unlock(); return c.mono }

// AfterMono implements Clock: the channel closes in the Advance that
// brings the reading to at, or at once when it is there already.
func (c *ManualClock) AfterMono(at time.Duration) (<-chan struct{}, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &manualWaiter{at: at, ch: make(chan struct{})}
	if c.mono >= at {
		close(w.ch)
		return w.ch, func() {}
	}
	if c.waiters == nil {
		c.waiters = map[*manualWaiter]struct{}{}
	}
	c.waiters[w] = struct{}{}
	return w.ch, func() { c.mu.Lock(); delete(c.waiters, w); c.mu.Unlock() }
}

// Advance moves the monotonic reading by mono (never backwards: a
// negative mono is ignored) and the wall time by wall (either way), and
// closes the channel of every timer the new reading reached.
func (c *ManualClock) Advance(mono, wall time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if mono > 0 {
		c.mono += mono
	}
	c.wall = c.wall.Add(wall)
	for w := range c.waiters {
		if c.mono >= w.at {
			close(w.ch)
			delete(c.waiters, w)
		}
	}
}

// Timers returns how many AfterMono timers are waiting, so a test can
// tell that a waiter is armed before it advances the clock.
func (c *ManualClock) Timers() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.waiters) }
