package bench

import (
	"bytes"
	"os"
	"slices"
	"strconv"
)

// parents maps each live process to its parent, from /proc/<n>/stat's ppid field: one scan of
// /proc however many processes are followed.
func parents() map[int]int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make(map[int]int, len(entries))
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if ppid, ok := statPPID(raw); ok {
			out[n] = ppid
		}
	}
	return out
}

// descendants returns roots and every process below them in ppid (pid → parent), roots first.
func descendants(roots []int, ppid map[int]int) []int {
	kids := map[int][]int{}
	for pid, parent := range ppid {
		kids[parent] = append(kids[parent], pid)
	}
	out := slices.Clone(roots)
	seen := map[int]bool{}
	for _, r := range roots {
		seen[r] = true
	}
	for i := 0; i < len(out); i++ {
		for _, k := range kids[out[i]] {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// statPPID reads the parent pid of a live (not zombie) process from its /proc stat line.
func statPPID(raw []byte) (int, bool) {
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(raw[i+1:])
	if len(f) < 2 || string(f[0]) == "Z" {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
