package connlimit

// connState is where a connection stands for eviction (Limits.EvictIdle). The listener's mutex
// guards it.
type connState uint8

const (
	// stateBusy: serving a request, or its server never said otherwise; never evicted.
	stateBusy connState = iota
	// stateIdle: between requests (or before the first); it may be closed to admit another.
	stateIdle
	// stateGone: closed, by its owner or to admit another; its slot is free.
	stateGone
)

// links are a connection's place in one idle list.
type links struct{ prev, next *Conn }

// idleList is a list of idle connections, the longest idle first, threaded through the
// connections themselves (no allocation). which picks the links the list uses, so that a
// connection can be in the listener's list and its address's list at once.
type idleList struct {
	head, tail *Conn
	which      func(*Conn) *links
}

// push appends c, the connection idle the shortest time.
func (l *idleList) push(c *Conn) {
	lk := l.which(c)
	lk.prev, lk.next = l.tail, nil
	if l.tail != nil {
		l.which(l.tail).next = c
	} else {
		l.head = c
	}
	l.tail = c
}

// remove takes c out of the list; c must be in it.
func (l *idleList) remove(c *Conn) {
	lk := l.which(c)
	if lk.prev != nil {
		l.which(lk.prev).next = lk.next
	} else {
		l.head = lk.next
	}
	if lk.next != nil {
		l.which(lk.next).prev = lk.prev
	} else {
		l.tail = lk.prev
	}
	lk.prev, lk.next = nil, nil
}

func allLinks(c *Conn) *links  { return &c.all }
func addrLinks(c *Conn) *links { return &c.sameAddr }

// peer is what the listener keeps per client address.
type peer struct {
	// open counts the address's admitted connections not yet closed.
	open int
	// idle lists its idle connections, the longest idle first.
	idle idleList
}

func newPeer() *peer { return &peer{idle: idleList{which: addrLinks}} }
