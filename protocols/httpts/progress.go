package httpts

import "io"

// minProgress is how many bytes must arrive within each idle timeout for a live body to count
// as moving (4 KiB, bytes): about 6.5 kbit/s over the default 5 s, below any live MPEG-TS
// stream (its PAT, PMT and PCR alone send more), far above a peer that trickles a byte every
// few seconds to hold the input.
const minProgress = 4 << 10

// progressReader keeps a body moving: it calls arm at the start and again each time
// minProgress more bytes have arrived. arm (re)starts a read deadline or a stall timer of the
// idle timeout, so a peer that stops, or sends less than minProgress bytes in an idle
// timeout, fails the read instead of holding the input, while a live body of any real rate is
// never cut, however long it lasts.
type progressReader struct {
	r     io.Reader
	arm   func()
	since int // bytes since arm was last called
}

func newProgressReader(r io.Reader, arm func()) *progressReader {
	arm()
	return &progressReader{r: r, arm: arm}
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if p.since += n; p.since >= minProgress {
		p.since = 0
		p.arm()
	}
	return n, err
}
