package link

import "github.com/sluicemedia/sluice/protocols/srt/wire"

// seqRange is first..last inclusive, in sequence-number order.
type seqRange struct{ first, last uint32 }

// lossList is an ordered set of sequence numbers kept as disjoint, non-adjacent ranges: the
// receiver's lost packets, or the sender's packets to retransmit. All its members lie within a
// window far smaller than half the sequence space, so wrap-aware comparison orders them.
type lossList struct {
	r     []seqRange
	count int
}

func (l *lossList) empty() bool { return len(l.r) == 0 }

// len returns how many sequence numbers the list holds.
func (l *lossList) len() int { return l.count }

// first returns the lowest member.
func (l *lossList) first() (uint32, bool) {
	if len(l.r) == 0 {
		return 0, false
	}
	return l.r[0].first, true
}

func rangeLen(r seqRange) int { return int(wire.SeqDiff(r.last, r.first)) + 1 }

// add inserts first..last (first not after last), merging with what it touches, and returns
// how many new members it brought.
func (l *lossList) add(first, last uint32) int {
	// Common case: after everything.
	if n := len(l.r); n == 0 || wire.SeqLess(l.r[n-1].last, first) {
		if n > 0 && wire.SeqAdd(l.r[n-1].last, 1) == first {
			l.r[n-1].last = last
		} else {
			l.r = append(l.r, seqRange{first, last})
		}
		added := int(wire.SeqDiff(last, first)) + 1
		l.count += added
		return added
	}
	// Find the first range whose end is at or after first-1 (it may merge).
	i := l.search(wire.SeqAdd(first, -1))
	// Ranges i..j-1 touch or overlap first..last.
	j := i
	lo, hi := first, last
	removed := 0
	for j < len(l.r) && !wire.SeqLess(wire.SeqAdd(hi, 1), l.r[j].first) {
		if wire.SeqLess(l.r[j].first, lo) {
			lo = l.r[j].first
		}
		if wire.SeqLess(hi, l.r[j].last) {
			hi = l.r[j].last
		}
		removed += rangeLen(l.r[j])
		j++
	}
	nr := seqRange{lo, hi}
	if j == i {
		l.r = append(l.r, seqRange{})
		copy(l.r[i+1:], l.r[i:])
		l.r[i] = nr
	} else {
		l.r[i] = nr
		l.r = append(l.r[:i+1], l.r[j:]...)
	}
	added := rangeLen(nr) - removed
	l.count += added
	return added
}

// search returns the index of the first range whose last is at or after seq.
func (l *lossList) search(seq uint32) int {
	lo, hi := 0, len(l.r)
	for lo < hi {
		m := (lo + hi) / 2
		if wire.SeqLess(l.r[m].last, seq) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// remove deletes seq and reports whether it was a member.
func (l *lossList) remove(seq uint32) bool { return l.removeRange(seq, seq) > 0 }

// removeBelow deletes every member before seq and returns how many.
func (l *lossList) removeBelow(seq uint32) int {
	n := 0
	i := 0
	for i < len(l.r) && wire.SeqLess(l.r[i].last, seq) {
		n += rangeLen(l.r[i])
		i++
	}
	if i < len(l.r) && wire.SeqLess(l.r[i].first, seq) {
		n += int(wire.SeqDiff(seq, l.r[i].first))
		l.r[i].first = seq
	}
	if i > 0 {
		l.r = append(l.r[:0], l.r[i:]...)
	}
	l.count -= n
	return n
}

// removeRange deletes first..last and returns how many members it held.
func (l *lossList) removeRange(first, last uint32) int {
	n := 0
	for s := first; ; s = wire.SeqAdd(s, 1) {
		i := l.search(s)
		if i == len(l.r) || wire.SeqLess(last, l.r[i].first) {
			break
		}
		if wire.SeqLess(s, l.r[i].first) {
			s = l.r[i].first
		}
		// Remove s..min(last, r.last) from range i.
		end := l.r[i].last
		if wire.SeqLess(last, end) {
			end = last
		}
		k := int(wire.SeqDiff(end, s)) + 1
		r := l.r[i]
		switch {
		case r.first == s && r.last == end:
			l.r = append(l.r[:i], l.r[i+1:]...)
		case r.first == s:
			l.r[i].first = wire.SeqAdd(end, 1)
		case r.last == end:
			l.r[i].last = wire.SeqAdd(s, -1)
		default:
			l.r = append(l.r, seqRange{})
			copy(l.r[i+1:], l.r[i:])
			l.r[i].last = wire.SeqAdd(s, -1)
			l.r[i+1].first = wire.SeqAdd(end, 1)
		}
		n += k
		l.count -= k
		if end == last {
			break
		}
		s = end
	}
	return n
}

// popFirst removes and returns the lowest member.
func (l *lossList) popFirst() (uint32, bool) {
	if len(l.r) == 0 {
		return 0, false
	}
	s := l.r[0].first
	if l.r[0].last == s {
		l.r = append(l.r[:0], l.r[1:]...)
	} else {
		l.r[0].first = wire.SeqAdd(s, 1)
	}
	l.count--
	return s, true
}

// clear empties the list, keeping its storage.
func (l *lossList) clear() {
	l.r = l.r[:0]
	l.count = 0
}
