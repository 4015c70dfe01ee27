package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Machine describes the computer the bench ran on.
type Machine struct {
	CPU    string
	Cores  int
	RAM    string
	Kernel string
	Go     string
	FFmpeg string
	Load   string // load averages at the start
}

// DescribeMachine reads the machine's description from /proc and the tools' versions.
func DescribeMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown", RAM: "unknown", Kernel: "unknown", FFmpeg: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPU = procField(b, "model name")
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(procField(b, "MemTotal"), "%d kB", &kb); err == nil {
			m.RAM = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.Load = strings.Join(f[:3], " ")
		}
	}
	if out, err := exec.Command("ffmpeg", "-version").Output(); err == nil {
		m.FFmpeg, _, _ = strings.Cut(string(out), "\n")
		m.FFmpeg = strings.TrimSpace(strings.TrimPrefix(m.FFmpeg, "ffmpeg version "))
		m.FFmpeg, _, _ = strings.Cut(m.FFmpeg, " Copyright")
	}
	return m
}

// procField is the value of the first "name : value" line of a /proc text file.
func procField(b []byte, name string) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
