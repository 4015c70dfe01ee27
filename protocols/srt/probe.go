package srt

import (
	"sync/atomic"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// Probe reports the link statistics of the connection an input or an output has now. Pass
// one to NewListener, Pull or Send; a nil Probe records nothing.
type Probe struct{ conn atomic.Pointer[link.Conn] }

// Link returns the current connection's statistics and its peer's address; ok is false while
// there is none.
func (p *Probe) Link() (st LinkStats, peer string, ok bool) {
	if p == nil {
		return LinkStats{}, "", false
	}
	c := p.conn.Load()
	if c == nil {
		return LinkStats{}, "", false
	}
	return c.Stats(), c.RemoteAddr().String(), true
}

// track makes c the current connection until the returned function is called.
func (p *Probe) track(c *link.Conn) func() {
	if p == nil {
		return func() {}
	}
	p.conn.Store(c)
	return func() { p.conn.CompareAndSwap(c, nil) }
}
