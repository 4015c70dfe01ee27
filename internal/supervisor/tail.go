package supervisor

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Bounds of a lineTail.
const (
	tailLines   = 20  // lines kept
	tailLineMax = 512 // bytes kept of one line; the rest is cut
)

// lineTail is an io.Writer that keeps the last tailLines lines written to it (a child's
// stderr), in bounded memory, and logs each at debug level. ffmpeg ends its status lines with
// '\r', so that ends a line too.
type lineTail struct {
	log    *slog.Logger
	redact func(string) string // applied to each line when set

	mu      sync.Mutex
	ring    [tailLines]string
	next    int // ring index of the next line
	count   int // lines in ring
	partial []byte
	cut     bool // partial lost bytes past tailLineMax
}

func newLineTail(log *slog.Logger, redact func(string) string) *lineTail {
	return &lineTail{log: log, redact: redact}
}

// Write keeps the lines in p; it never fails.
func (t *lineTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			t.add(p)
			break
		}
		t.add(p[:i])
		t.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// add appends b to the line being written, up to tailLineMax bytes.
func (t *lineTail) add(b []byte) {
	room := tailLineMax - len(t.partial)
	if len(b) > room {
		b, t.cut = b[:room], true
	}
	t.partial = append(t.partial, b...)
}

// endLine moves the line being written into the ring; blank lines are dropped.
func (t *lineTail) endLine() {
	line := strings.TrimSpace(string(t.partial))
	if t.cut {
		line += "…"
	}
	t.partial, t.cut = t.partial[:0], false
	if line == "" {
		return
	}
	if t.redact != nil {
		line = t.redact(line)
	}
	t.log.Debug("stderr", "line", line)
	t.ring[t.next] = line
	t.next = (t.next + 1) % tailLines
	t.count = min(t.count+1, tailLines)
}

// Lines returns the kept lines, oldest first, with an unfinished last line ended.
func (t *lineTail) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.partial) > 0 {
		t.endLine()
	}
	out := make([]string, 0, t.count)
	for i := t.count; i > 0; i-- {
		out = append(out, t.ring[(t.next-i+tailLines)%tailLines])
	}
	return out
}
