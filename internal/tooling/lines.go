package tooling

import (
	"strings"
	"sync"
)

// Lines keeps a child's log lines for the checks that look for one or show the last ones. Max,
// when above zero, is how many it keeps: the oldest go first. The zero value keeps everything.
// Safe for concurrent use: the goroutine that reads the child adds while the test reads.
type Lines struct {
	Max   int
	mu    sync.Mutex
	lines []string
}

// Add keeps line, letting the oldest go once Max are kept.
func (l *Lines) Add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Max > 0 && len(l.lines) >= l.Max {
		l.lines = l.lines[1:]
	}
	l.lines = append(l.lines, line)
}

// Containing returns the kept lines that contain sub, oldest first.
func (l *Lines) Containing(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

// Tail returns the last n kept lines, oldest first.
func (l *Lines) Tail(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines[max(0, len(l.lines)-n):]...)
}
