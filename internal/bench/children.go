package bench

import (
	"bytes"
	"os"
	"strconv"
)

// children lists the live child processes of pid, from /proc/<n>/stat's ppid field.
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if ppid, ok := statPPID(raw); ok && ppid == pid {
			out = append(out, n)
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
