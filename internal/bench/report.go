package bench

import (
	"fmt"
	"strings"
	"time"
)

// Report is the content of BENCHMARKS.md.
type Report struct {
	Machine Machine
	When    time.Time
	Window  time.Duration
	Runs    int
	TeeRuns int // runs of the fan-outs' tee reference
	Took    time.Duration
	Outcome *Outcome
	Micro   string // output of the Go micro-benchmarks, empty when not run
	Caveat  string // a sentence on the conditions of this run, empty when none
}

// Markdown renders the report.
func (r Report) Markdown() string {
	var b strings.Builder
	m := r.Machine
	b.WriteString("# Benchmarks\n\nWritten by `make bench` (`cmd/sluice-bench`); do not edit by hand, run it again.\n\n")
	if r.Caveat != "" {
		b.WriteString("**" + r.Caveat + "**\n\n")
	}
	fmt.Fprintf(&b, "## Machine\n\n| | |\n|---|---|\n| CPU | %s |\n| cores | %d |\n| RAM | %s |\n| kernel | %s |\n| Go | %s |\n| ffmpeg | %s |\n| load average at start | %s |\n| date | %s |\n| duration of the comparison (after the micro-benchmarks) | %s |\n\n",
		m.CPU, m.Cores, m.RAM, m.Kernel, m.Go, m.FFmpeg, m.Load, r.When.UTC().Format("2006-01-02 15:04 MST"), r.Took.Round(time.Second))
	fmt.Fprintf(&b, `## Method

One pre-encoded clip (ffmpeg: 1280x720 30 fps H.264 High at 4 Mbit/s with a key frame every 2 s, AAC
128 kbit/s, MPEG-TS) feeds both arms the same way: SRT inputs get it from a Go pacer in the bench that
writes 7×188-byte payloads at the pace of the clip's PCRs (so the bench knows when each frame left);
RTMP inputs get it from `+"`ffmpeg -re -c copy -f flv`"+`. SRT latency is 200 ms everywhere.
Only the server is measured: the sluice process (with its children), or the ffmpeg processes doing
its job. CPU is utime+stime from /proc/<pid>/stat over a %s window that starts when the publishers
start (for players: once every player has listed its first segment, so that ffmpeg's input probing,
about 5 s of buffering, and sluice's start-up are left out of both arms), summed over the processes; peak RSS is the highest sum of VmRSS sampled every 250 ms. Every
sluice run starts a fresh sluice with an empty data folder. Each arm runs %d times, alternating; the
table shows medians (the listing delays pool the segments of every run).

Fan-outs: the receivers run in the bench process and are the same for every arm; half are SRT
listeners that check MPEG-TS continuity and count video frames, half are RTMP servers (sluice's own
protocols/rtmp, on an internal/stream registry) whose stream reader counts video frames. sluice
feeds them with passthrough restreams (`+"`OUTPUT_TYPE_SRT_URL`, `OUTPUT_TYPE_OTHER_RTMP_URL`"+`) from one SRT
publish to its SRT server module. The reference, which the ratios use, is as many `+"`ffmpeg -c copy`"+`
processes as restreams, each doing one restream's job: its own SRT listener input, one output
(`+"`-f mpegts srt://…`"+` or `+"`-f flv rtmp://…/live/<key>`"+`). The bench's pacer then sends the clip to all
their listeners at once, on the one schedule; the pacer and the receivers are in the bench
process, which is not measured but shares the same cores (with 100 listeners and 100 receivers it
takes a visible share of them). %s

Players use 2 s fragments and initial_live_manifest_size 1, so that sluice lists a segment as soon as ffmpeg's HLS muxer does.
The listing delay runs from the moment the pacer sent a segment's last frame to the first poll of
the playlist that lists the segment; it includes SRT's 200 ms latency, and leaves out the first
segment (the time to the first playlist covers start-up). Playlists are polled every 20 ms before the
first segment and from 200 ms before the next one is due until it is listed, every 500 ms otherwise:
sluice's playlists are polled over HTTP, ffmpeg's read from disk, and polling sluice 50 times a second
costs it about 1 %% of a core (roughly 170 µs a request), as much as an RTMP player's media path.
The reference's first playlist includes ffmpeg's input probing (default -analyzeduration).
"Frames not received" counts, over all receivers, the frames the publisher sent completely (less the
one in flight when it stopped) that a receiver did not get; continuity errors count MPEG-TS packets
lost on the way to the SRT receivers (RTMP runs over TCP: what it loses shows only as frames not
received, and the note gives the RTMP receivers' share); sluice's drop warnings are its log lines about readers that fell behind the bus.

%s
`, r.Window, r.Runs, teeNote(r.TeeRuns), srtMethod(readersAlone))
	b.WriteString("| scenario | sluice does | reference runs |\n|---|---|---|\n")
	for _, sc := range r.Outcome.Scenarios {
		ref := "`" + sc.Ref + "`"
		if sc.Tee != "" && r.TeeRuns > 0 {
			ref += "; extra: `" + sc.Tee + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", sc.Name, sc.Job, ref)
	}
	rows := r.Outcome.Rows()
	b.WriteString("\n## Results\n\n")
	checks := Checks(rows)
	if r.Micro != "" {
		checks = append(checks, MicroChecks(r.Micro)...)
	}
	for _, c := range checks {
		b.WriteString("- " + c + "\n")
	}
	b.WriteString("\n")
	b.WriteString(Table(rows))
	if len(r.Outcome.Errors) > 0 {
		b.WriteString("\nFailed runs (left out of the medians):\n\n")
		for _, e := range r.Outcome.Errors {
			b.WriteString("- " + oneLine(e) + "\n")
		}
	}
	if r.Outcome.Latency != nil {
		b.WriteString("\n" + r.Outcome.Latency.Markdown())
	}
	if r.Outcome.Profile != "" {
		fmt.Fprintf(&b, "\n## CPU profile of sluice, %s (%s)\n\n`go tool pprof -top` of a profile taken over the window of one more run:\n\n```\n",
			r.Outcome.ProfileOf.Name, r.Outcome.ProfileOf.Job)
		b.WriteString(strings.TrimSpace(r.Outcome.Profile))
		b.WriteString("\n```\n")
	}
	if r.Micro != "" {
		b.WriteString("\n## Go micro-benchmarks of the hot paths\n\n`go test -run '^$' -bench . -benchmem ./...`:\n\n```\n")
		b.WriteString(strings.TrimSpace(r.Micro))
		b.WriteString("\n```\n")
	}
	return b.String()
}

// teeNote describes the fan-outs' extra reference in the method.
func teeNote(runs int) string {
	if runs <= 0 {
		return "The tee reference (one ffmpeg feeding every receiver) was not run."
	}
	return fmt.Sprintf("The rows marked \"reference: one ffmpeg tee\" compare sluice with one ffmpeg whose tee muxer feeds every\nreceiver (%d run(s) of it; sluice's figure is the median of its runs as above). fanout-100 has no such row: the\ntee opens its slaves one after another before it forwards the first packet, and with a live SRT input 100 slaves\ntook longer than the window (it delivered nothing in trial runs).", runs)
}

// oneLine keeps an error message on one Markdown line, at most 400 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// Benchmarks keeps the lines of `go test -bench` output that carry results or name a package.
func Benchmarks(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Benchmark") || strings.HasPrefix(l, "pkg: ") || strings.HasPrefix(l, "FAIL") || strings.HasPrefix(l, "--- FAIL") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// srtMethod describes the SRT readers' and relay's scenarios in the method.
func srtMethod(alone time.Duration) string {
	return fmt.Sprintf(`SRT readers (srt-readers-50): the pacer publishes to sluice's SRT server module (`+"`publisher/bench/cam`"+`); after
%v with the publisher alone, %d SRT receivers in the bench call it (`+"`receiver/bench/cam`"+`, retrying until the stream is
published), and the window starts once all are connected. The reference is the same bench code driving the gosrt-based
sluice build (the last commit before the switch to protocols/srt/link), given with `+"`-baseline-bin`"+`; without it the
reference column holds the figures RECORDED with that build, and the note says when and on which machine. **RSS per
reader** = (peak RSS over the window with the readers − peak RSS over the %v with the publisher alone, both sampled
every 250 ms in the same run) / %d, in MB of 10^6 bytes. Each receiver checks MPEG-TS continuity and places its video
frames in the clip by their PTS: "frames not received" counts, per receiver, the clip's frames from the key frame it
started at to the last one the publisher sent completely that it did not get, summed.

SRT relay latency (srt-relay): the pacer publishes into a relay and one receiver in the bench calls it and reads the
stream back: sluice's SRT server module (publisher and receiver stream ids), or `+"`srt-live-transmit`"+` between two
listeners (its URL latency is in milliseconds), both hops at 200 ms. Both relays pass the publisher's bytes on
unchanged, so the receiver finds each TS packet it reads in the clip (by content, in order; the PAT and PMT a receiver
may start with repeat in the clip and stay unplaced until a packet found once places the stream), and so when the pacer
wrote it. A payload's latency beyond the configured one is its read time less the pacer's write time of the last packet
it carries, less 2 × 200 ms; payloads the pacer wrote before the receiver was connected are left out (sluice sends a
joining receiver the GOP it keeps at once), and so are those read after the pacer stopped (a connection that ends
hands over what it holds at once). The latency rows pool every payload of every run. "TS packets lost" counts
the clip's packets between the first and the last the receiver placed that it did not read.
`, alone, readersN, alone, readersN)
}
