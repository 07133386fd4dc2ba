package fetchengine

import "sync"

// Budget is a bound on the bytes several engines (every Reader of a
// process) hold at once: fetched and not yet handed to the application
// (Add, Release) plus what their requests in flight may bring. A request
// asks for no more than the Budget has left.
type Budget struct {
	mu    sync.Mutex
	limit int64 // 0: none
	held  int64
	wait  chan struct{} // closed when bytes are released
}

// NewBudget returns a Budget of limit bytes (0: no bound).
func NewBudget(limit int64) *Budget { return &Budget{limit: limit} }

// SetLimit changes the bound (0: none).
func (b *Budget) SetLimit(limit int64) {
	b.mu.Lock()
	b.limit = limit
	b.wakeLocked()
	b.mu.Unlock()
}

// Limit returns the bound (0: none).
func (b *Budget) Limit() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit
}

// Add counts n bytes held.
func (b *Budget) Add(n int64) {
	b.mu.Lock()
	b.held += n
	b.mu.Unlock()
}

// Release gives back n bytes.
func (b *Budget) Release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	b.wakeLocked()
	b.mu.Unlock()
}

// Held returns the bytes held.
func (b *Budget) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

func (b *Budget) wakeLocked() {
	if b.wait != nil {
		close(b.wait)
		b.wait = nil
	}
}

// budgetFloor is what an engine that holds nothing may always ask for.
const budgetFloor = 1 << 20

// reserve takes up to want bytes for an engine holding own bytes. With
// none left it returns 0 and a channel closed when some are released. An
// engine that holds nothing always gets up to budgetFloor: no Reader ever
// waits for another one's application (which may be waiting for it), and
// many Readers starting at once overshoot the bound by a MiB each at most.
func (b *Budget) reserve(want, own int64) (int64, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	got := want
	if b.limit > 0 {
		got = min(want, b.limit-b.held)
		if own == 0 {
			got = max(got, min(want, budgetFloor))
		}
	}
	if got <= 0 {
		if b.wait == nil {
			b.wait = make(chan struct{})
		}
		return 0, b.wait
	}
	b.held += got
	return got, nil
}
