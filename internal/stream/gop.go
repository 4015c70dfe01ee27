package stream

import "github.com/sluicemedia/sluice/internal/media"

// gop keeps what a new reader starts with. With video it holds every unit since the latest
// video key frame; a GOP longer than the buffer, in units or in payload bytes, is given up,
// and new readers then wait for the next key frame. Without video it holds the last window
// units, fewer when they carry more than the byte budget.
type gop struct {
	buf      []*media.AccessUnit // circular
	sizes    []uint32            // payload bytes of buf's units
	start    int
	n        int
	bytes    int  // payload bytes kept
	maxBytes int  // budget of bytes
	window   int  // units kept without video
	video    bool // the stream has a video track: start at key frames
	valid    bool // with video: buf starts at a key frame
}

// init sizes the buffer; window is at most size.
func (g *gop) init(size, window, maxBytes int) {
	g.buf = make([]*media.AccessUnit, size)
	g.sizes = make([]uint32, size)
	g.window = window
	g.maxBytes = maxBytes
}

// reset empties the GOP and sets whether the stream has video.
func (g *gop) reset(video bool) {
	for i := range g.n {
		g.buf[(g.start+i)%len(g.buf)] = nil
	}
	g.start, g.n, g.bytes, g.valid = 0, 0, 0, false
	g.video = video
}

// add records a unit of size payload bytes just written; key tells whether it is a video key
// frame. With video, it returns the budget that made it give up the GOP, if any.
func (g *gop) add(au *media.AccessUnit, size int, key bool) budget {
	if !g.video {
		for g.n > 0 && (g.n == g.window || g.bytes+size > g.maxBytes) {
			g.buf[g.start] = nil
			g.bytes -= int(g.sizes[g.start])
			g.start = (g.start + 1) % len(g.buf)
			g.n--
		}
		i := (g.start + g.n) % len(g.buf)
		g.buf[i], g.sizes[i] = au, uint32(size)
		g.bytes += size
		g.n++
		return budgetNone
	}
	if key {
		g.reset(true)
		g.valid = true
	}
	if !g.valid {
		return budgetNone
	}
	switch {
	case g.n == len(g.buf):
		g.reset(true)
		return budgetGOPUnits
	case g.n > 0 && g.bytes+size > g.maxBytes:
		g.reset(true)
		return budgetGOPBytes
	}
	g.buf[g.n], g.sizes[g.n] = au, uint32(size)
	g.bytes += size
	g.n++
	return budgetNone
}

// units calls fn with each kept unit and its size, oldest first. It reports false when there
// is nothing a new reader can start with.
func (g *gop) units(fn func(au *media.AccessUnit, size uint32)) bool {
	if g.n == 0 || (g.video && !g.valid) {
		return false
	}
	for i := range g.n {
		j := (g.start + i) % len(g.buf)
		fn(g.buf[j], g.sizes[j])
	}
	return true
}
