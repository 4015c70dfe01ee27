package bench

import (
	"fmt"
	"math"
	"strings"
)

// maxScrapedRatio is issue 14's target: scraping /metrics every scrapeEvery costs the player at
// most this times its CPU unscraped.
const maxScrapedRatio = 1.02

// Checks states the issues' acceptance points against the table: the RTMP player uses no more
// CPU than the ffmpeg remux, the SRT player no more than ffmpeg's, fan-out to 100 readers loses
// nothing, the SRT readers' and relay's targets (srtChecks), and the CPU and RSS ratios of the
// fan-outs against as many ffmpeg processes.
func Checks(rows []Row) []string {
	find := func(scenario, metric string) (Row, bool) {
		for _, r := range rows {
			if r.Scenario == scenario && r.Metric == metric {
				return r, true
			}
		}
		return Row{}, false
	}
	var out []string
	if r, ok := find("player-rtmp", "CPU"); ok {
		out = append(out, fmt.Sprintf("RTMP input → player uses no more CPU than the ffmpeg remux: %s (sluice %s%%, ffmpeg %s%% of a core, ratio %s).",
			verdict(r.Sluice <= r.Ref), num(r.Sluice), num(r.Ref), num(r.Ratio())))
	}
	if r, ok := find("player-srt", "CPU"); ok {
		out = append(out, fmt.Sprintf("SRT input → player uses at most %s× the CPU of ffmpeg (libsrt) reading the same SRT stream and writing the same HLS: %s (ratio %s: sluice %s%%, ffmpeg %s%% of a core); its profile is below.",
			num(maxPlayerSRTRatio), verdict(r.Ratio() <= maxPlayerSRTRatio), num(r.Ratio()), num(r.Sluice), num(r.Ref)))
	}
	if r, ok := find("player-srt-scraped", "CPU"); ok {
		line := fmt.Sprintf("Scraping /metrics every %v costs the player no measurable CPU (ratio ≤ %s against the same player not scraped): %s (ratio %s: %s%% against %s%% of a core).",
			scrapeEvery, num(maxScrapedRatio), verdict(r.Ratio() <= maxScrapedRatio), num(r.Ratio()), num(r.Sluice), num(r.Ref))
		if c, ok := find("player-srt-scraped", scrapeMetric); ok && !math.IsNaN(c.Sluice) && r.Ref > 0 {
			direct := (r.Ref + scrapeShare(c.Sluice)) / r.Ref
			line += fmt.Sprintf(" Measured directly, a scrape costs the server %s ms of CPU (median), %s%% of a core at that interval: ratio %.3f against the unscraped player's CPU (%s).",
				num(c.Sluice), num(scrapeShare(c.Sluice)), direct, verdict(direct <= maxScrapedRatio))
		}
		out = append(out, line)
	}
	r, ok1 := find("fanout-100", "frames not received, worst run")
	cc, ok2 := find("fanout-100", "continuity errors, worst run")
	if ok1 && ok2 {
		out = append(out, fmt.Sprintf("Fan-out to 100 SRT/RTMP readers with zero dropped units: %s (worst run: sluice's readers missed %s frames and %s TS packets; those of the 100 ffmpeg processes %s frames and %s packets).",
			verdict(r.Sluice == 0 && cc.Sluice == 0), num(r.Sluice), num(cc.Sluice), num(r.Ref), num(cc.Ref)))
	}
	out = append(out, srtChecks(find)...)
	for _, name := range []string{"fanout-20", "fanout-100"} {
		cpu, ok1 := find(name, "CPU")
		rss, ok2 := find(name, "peak RSS")
		if ok1 && ok2 {
			out = append(out, fmt.Sprintf("%s passthrough restreams (half SRT, half RTMP) against as many `ffmpeg -c copy`: CPU ratio %s (sluice %s%%, ffmpeg %s%% of a core), RSS ratio %s (sluice %s MiB, ffmpeg %s MiB).",
				strings.TrimPrefix(name, "fanout-"), num(cpu.Ratio()), num(cpu.Sluice), num(cpu.Ref), num(rss.Ratio()), num(rss.Sluice), num(rss.Ref)))
		}
	}
	return out
}

// verdict words a check's outcome; a NaN comparison is false, so "no" covers missing figures.
func verdict(ok bool) string {
	if ok {
		return "**yes**"
	}
	return "**no**"
}
