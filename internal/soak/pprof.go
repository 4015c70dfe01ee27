package soak

import (
	"bufio"
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseGoroutineTotal reads N from the first line of /debug/pprof/goroutine?debug=1,
// "goroutine profile: total N".
func ParseGoroutineTotal(body []byte) (int, error) {
	line, _, _ := bytes.Cut(body, []byte("\n"))
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "goroutine profile: total ")
	if !ok {
		return 0, fmt.Errorf("goroutine profile: first line %q: want \"goroutine profile: total N\"", truncate(line))
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return 0, fmt.Errorf("goroutine profile: total %q: %w", rest, err)
	}
	return n, nil
}

// MemStats are the runtime.MemStats counters the soak compares, in bytes.
type MemStats struct {
	HeapInuse    int64
	HeapIdle     int64
	HeapReleased int64
	Sys          int64
}

// Retained is heap memory the runtime has freed but not yet returned to the system: it still
// counts in RSS until the scavenger releases it.
func (m MemStats) Retained() int64 { return m.HeapIdle - m.HeapReleased }

// ParseMemStats reads the "# Name = N" lines that /debug/pprof/heap?debug=1 ends with.
func ParseMemStats(body []byte) (MemStats, error) {
	want := map[string]*int64{}
	var m MemStats
	want["HeapInuse"], want["HeapIdle"], want["HeapReleased"], want["Sys"] = &m.HeapInuse, &m.HeapIdle, &m.HeapReleased, &m.Sys
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "# ")
		if !ok {
			continue
		}
		name, val, ok := strings.Cut(rest, " = ")
		dst := want[name]
		if !ok || dst == nil {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			return MemStats{}, fmt.Errorf("heap profile: %s = %q: %w", name, val, err)
		}
		*dst = n
		delete(want, name)
		found++
	}
	if err := sc.Err(); err != nil {
		return MemStats{}, fmt.Errorf("heap profile: %w", err)
	}
	if len(want) > 0 {
		missing := make([]string, 0, len(want))
		for k := range want {
			missing = append(missing, k)
		}
		slices.Sort(missing)
		return MemStats{}, fmt.Errorf("heap profile: no runtime.MemStats line for %s (found %d)", strings.Join(missing, ", "), found)
	}
	return m, nil
}
