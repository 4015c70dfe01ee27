package wire

// SeqMask keeps the 31 bits of a packet sequence number.
const SeqMask = 1<<31 - 1

// SeqAdd returns s+n in the 31-bit sequence space (n may be negative).
func SeqAdd(s uint32, n int32) uint32 {
	return uint32(int64(s)+int64(n)) & SeqMask
}

// SeqDiff returns a-b in the 31-bit sequence space, in [-2^30, 2^30): a difference of half
// the space or more is taken as the other way round.
func SeqDiff(a, b uint32) int32 {
	// Sign-extend the 31-bit difference.
	return int32((a-b)<<1) >> 1
}

// SeqLess reports whether a comes before b.
func SeqLess(a, b uint32) bool { return SeqDiff(a, b) < 0 }

// MsgNoMask keeps the 26 bits of a message number (with the KK and R flags in use).
const MsgNoMask = 1<<26 - 1

// MsgNoNext returns the message number after m; message numbers run from 1 to 2^26-1.
func MsgNoNext(m uint32) uint32 {
	m = (m + 1) & MsgNoMask
	if m == 0 {
		m = 1
	}
	return m
}
