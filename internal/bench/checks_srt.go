package bench

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// The SRT targets of issue 12 ("Performance"), as the checks state them.
const (
	maxPlayerSRTRatio  = 1.0 // SRT input → player: CPU at most this times ffmpeg's (libsrt)
	maxReadersCPURatio = 0.3 // srt-readers-50: CPU at most this times the gosrt-based build's
	maxRSSPerReaderMB  = 1.0 // srt-readers-50: MB (10^6 bytes) of RSS per reader at most
	maxRelayP99ms      = 5.0 // srt-relay: p99 of the latency beyond the configured one, ms
)

// srtChecks states the SRT readers' and the relay's targets against the table.
func srtChecks(find func(scenario, metric string) (Row, bool)) []string {
	var out []string
	const readers = "srt-readers-50"
	if cpu, ok := find(readers, metricCPU); ok {
		ref := "the gosrt-based build measured in this run"
		if cpu.Recorded {
			ref = "the gosrt-based build's figure RECORDED earlier (see the table's note), not measured in this run"
		}
		out = append(out, fmt.Sprintf("%d SRT readers of one stream through the SRT server module use at most %s× the CPU of the gosrt-based build: %s (ratio %s: sluice %s%%, gosrt build %s%% of a core; reference: %s).",
			readersN, num(maxReadersCPURatio), verdict(cpu.Ratio() <= maxReadersCPURatio), num(cpu.Ratio()), num(cpu.Sluice), num(cpu.Ref), ref))
	}
	if rss, ok := find(readers, metricRSSPerReader); ok {
		out = append(out, fmt.Sprintf("At most %s MB of RSS per SRT reader: %s (sluice %s MB, gosrt build %s MB; peak RSS with the readers less peak RSS with the publisher alone, over %d).",
			num(maxRSSPerReaderMB), verdict(rss.Sluice <= maxRSSPerReaderMB), num(rss.Sluice), num(rss.Ref), readersN))
	}
	frames, ok1 := find(readers, metricFramesShort)
	cc, ok2 := find(readers, metricCCErrors)
	if ok1 && ok2 {
		out = append(out, fmt.Sprintf("Zero lost packets at the %d SRT readers: %s (worst run: %s frames not received, %s continuity errors; gosrt build %s frames, %s errors).",
			readersN, verdict(frames.Sluice == 0 && cc.Sluice == 0), num(frames.Sluice), num(cc.Sluice), num(frames.Ref), num(cc.Ref)))
	}
	if p99, ok := find("srt-relay", metricLatencyP99); ok {
		p50, _ := find("srt-relay", metricLatencyP50)
		out = append(out, fmt.Sprintf("An SRT relay through sluice (publish in, read out) adds at most %s ms beyond the configured latency, p99: %s (p99 %s ms, median %s ms; srt-live-transmit p99 %s ms, median %s ms).",
			num(maxRelayP99ms), verdict(p99.Sluice <= maxRelayP99ms), num(p99.Sluice), num(p50.Sluice), num(p99.Ref), num(p50.Ref)))
	}
	return out
}

// The micro-benchmarks of the SRT link's packet paths (protocols/srt/link).
const (
	linkPackage    = "github.com/sluicemedia/sluice/protocols/srt/link"
	benchReceive   = "BenchmarkReceivePath"
	benchSend      = "BenchmarkSendPath"
	maxAllocsPerOp = 0 // allocations per packet on the link's receive and send paths
)

// MicroChecks states the allocation target of the SRT link's receive and send paths (one
// packet per op) against the output of the Go micro-benchmarks.
func MicroChecks(micro string) []string {
	recv, okR := allocsPerOp(micro, linkPackage, benchReceive)
	send, okS := allocsPerOp(micro, linkPackage, benchSend)
	if !okR || !okS {
		return []string{fmt.Sprintf("No allocation per packet on the SRT link's receive and send paths: **not measured** (%s and %s of %s are not in the micro-benchmarks).",
			benchReceive, benchSend, linkPackage)}
	}
	return []string{fmt.Sprintf("No allocation per packet on the SRT link's receive and send paths: %s (%s %s allocs/op, %s %s allocs/op; one packet per op).",
		verdict(recv <= maxAllocsPerOp && send <= maxAllocsPerOp), benchReceive, num(recv), benchSend, num(send))}
}

// allocsPerOp finds benchmark name of package pkg in `go test -bench -benchmem` output and
// returns its allocs/op.
func allocsPerOp(out, pkg, name string) (float64, bool) {
	cur := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			cur = strings.TrimSpace(p)
			continue
		}
		f := strings.Fields(line)
		if cur != pkg || len(f) < 2 {
			continue
		}
		// The name carries the GOMAXPROCS suffix: BenchmarkSendPath-2.
		if base, _, _ := strings.Cut(f[0], "-"); base != name {
			continue
		}
		for i := 1; i < len(f); i++ {
			if f[i] == "allocs/op" {
				v, err := strconv.ParseFloat(f[i-1], 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}
