package rtmp

import (
	"math/bits"
	"sync"
)

// Scratch buffers hold the messages being assembled. They come from pools by power-of-two
// size class, from minScratch up to maxMessageSize, and go back once the message is copied
// into its own body of exactly its length: one allocation per message however its bytes
// trickle in, and a buffer that grows only with the bytes received.
const (
	// minScratch is the smallest scratch buffer (4 KiB, bytes).
	minScratch = 4 << 10
	// scratchClasses counts the size classes: 4 KiB << 11 is maxMessageSize.
	scratchClasses = 12
)

var scratchPools [scratchClasses]sync.Pool

// scratchClass is the smallest class whose buffers hold n bytes; n ≤ maxMessageSize.
func scratchClass(n int) int {
	if n <= minScratch {
		return 0
	}
	return bits.Len(uint(n-1)) - bits.Len(uint(minScratch-1))
}

// getScratch returns an empty buffer of the class that holds n bytes.
func getScratch(n int) *[]byte {
	cl := scratchClass(n)
	if b, ok := scratchPools[cl].Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]byte, 0, minScratch<<cl)
	return &b
}

// putScratch gives a buffer from getScratch back.
func putScratch(b *[]byte) {
	if b == nil {
		return
	}
	cl := scratchClass(cap(*b))
	if cl < scratchClasses && cap(*b) == minScratch<<cl {
		scratchPools[cl].Put(b)
	}
}
