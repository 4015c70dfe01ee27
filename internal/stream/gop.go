package stream

import "github.com/sluicemedia/sluice/internal/media"

// gop keeps what a new reader starts with. With video it holds every unit since the latest
// video key frame; a GOP longer than the buffer is given up, and new readers then wait for the
// next key frame. Without video it holds the last window units.
type gop struct {
	buf    []*media.AccessUnit // circular
	start  int
	n      int
	window int  // units kept without video
	video  bool // the stream has a video track: start at key frames
	valid  bool // with video: buf starts at a key frame
}

// init sizes the buffer; window is at most size.
func (g *gop) init(size, window int) {
	g.buf = make([]*media.AccessUnit, size)
	g.window = window
}

// reset empties the GOP and sets whether the stream has video.
func (g *gop) reset(video bool) {
	for i := range g.n {
		g.buf[(g.start+i)%len(g.buf)] = nil
	}
	g.start, g.n, g.valid = 0, 0, false
	g.video = video
}

// add records a unit just written; key tells whether it is a video key frame.
func (g *gop) add(au *media.AccessUnit, key bool) {
	if !g.video {
		if g.n == g.window {
			g.buf[g.start] = nil
			g.start = (g.start + 1) % len(g.buf)
			g.n--
		}
		g.buf[(g.start+g.n)%len(g.buf)] = au
		g.n++
		return
	}
	if key {
		g.reset(true)
		g.valid = true
	}
	if !g.valid {
		return
	}
	if g.n == len(g.buf) {
		g.reset(true)
		return
	}
	g.buf[g.n] = au
	g.n++
}

// units calls fn with each kept unit, oldest first. It reports false when there is nothing a
// new reader can start with.
func (g *gop) units(fn func(au *media.AccessUnit)) bool {
	if g.n == 0 || (g.video && !g.valid) {
		return false
	}
	for i := range g.n {
		fn(g.buf[(g.start+i)%len(g.buf)])
	}
	return true
}
