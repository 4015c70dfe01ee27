package link

import (
	"sync"
	"time"
)

// clock is a mux's one timer: a heap of its connections by the time each next wants
// service, and the list of connections with packets to send now. The mux's clock goroutine
// serves both; there is no timer or goroutine per connection.
type clock struct {
	mu    sync.Mutex
	heap  []*Conn
	ready []*Conn
	spare []*Conn
	wake  chan struct{} // cap 1
}

func newClock() *clock { return &clock{wake: make(chan struct{}, 1)} }

func (k *clock) poke() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// markReady asks for c's service at once (it has packets to send).
func (k *clock) markReady(c *Conn) {
	if k.addReady(c) {
		k.poke()
	}
}

// addReady puts c on the ready list without waking the clock (a Batch sends it); it reports
// whether c was not on it.
func (k *clock) addReady(c *Conn) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c.inReady {
		return false
	}
	c.inReady = true
	k.ready = append(k.ready, c)
	return true
}

// takeReady returns the ready connections and empties the list.
func (k *clock) takeReady() []*Conn {
	k.mu.Lock()
	list := k.ready
	k.ready = k.spare[:0]
	for _, c := range list {
		c.inReady = false
	}
	k.mu.Unlock()
	return list
}

// giveBack returns a list taken by takeReady for reuse.
func (k *clock) giveBack(list []*Conn) {
	clear(list)
	k.mu.Lock()
	k.spare = list[:0]
	k.mu.Unlock()
}

// schedule sets when c wants service next (never: not at all).
func (k *clock) schedule(c *Conn, t int64) {
	k.mu.Lock()
	first := len(k.heap) == 0 || t < k.heap[0].clkDue
	switch {
	case t >= never:
		if c.hidx >= 0 {
			k.removeAt(c.hidx)
		}
		first = false
	case c.hidx >= 0:
		if t == c.clkDue {
			first = false
			break
		}
		c.clkDue = t
		k.fix(c.hidx)
	default:
		c.clkDue = t
		c.hidx = len(k.heap)
		k.heap = append(k.heap, c)
		k.up(c.hidx)
	}
	k.mu.Unlock()
	if first {
		k.poke()
	}
}

// scheduleEarlier moves c's next service to t if that is sooner than what it has.
func (k *clock) scheduleEarlier(c *Conn, t int64) {
	k.mu.Lock()
	if c.hidx >= 0 && c.clkDue <= t {
		k.mu.Unlock()
		return
	}
	k.mu.Unlock()
	k.schedule(c, t)
}

// forget removes c from the clock.
func (k *clock) forget(c *Conn) {
	k.mu.Lock()
	if c.hidx >= 0 {
		k.removeAt(c.hidx)
	}
	if c.inReady {
		for i, r := range k.ready {
			if r == c {
				k.ready = append(k.ready[:i], k.ready[i+1:]...)
				break
			}
		}
		c.inReady = false
	}
	k.mu.Unlock()
}

// popDue removes and returns a connection due at now, or nil.
func (k *clock) popDue(now int64) *Conn {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.heap) == 0 || k.heap[0].clkDue > now {
		return nil
	}
	c := k.heap[0]
	k.removeAt(0)
	return c
}

// next returns how long until the earliest deadline (-1: none).
func (k *clock) next(now int64) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.ready) > 0 {
		return 0
	}
	if len(k.heap) == 0 {
		return -1
	}
	return time.Duration(max(k.heap[0].clkDue-now, 0)) * time.Microsecond
}

func (k *clock) less(i, j int) bool { return k.heap[i].clkDue < k.heap[j].clkDue }

func (k *clock) swap(i, j int) {
	k.heap[i], k.heap[j] = k.heap[j], k.heap[i]
	k.heap[i].hidx = i
	k.heap[j].hidx = j
}

func (k *clock) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !k.less(i, p) {
			return
		}
		k.swap(i, p)
		i = p
	}
}

func (k *clock) down(i int) bool {
	start := i
	n := len(k.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && k.less(r, l) {
			m = r
		}
		if !k.less(m, i) {
			break
		}
		k.swap(i, m)
		i = m
	}
	return i > start
}

func (k *clock) fix(i int) {
	if !k.down(i) {
		k.up(i)
	}
}

func (k *clock) removeAt(i int) {
	last := len(k.heap) - 1
	c := k.heap[i]
	if i != last {
		k.swap(i, last)
	}
	k.heap[last] = nil
	k.heap = k.heap[:last]
	if i != last {
		k.fix(i)
	}
	c.hidx = -1
}
