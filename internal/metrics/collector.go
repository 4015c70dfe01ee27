package metrics

import (
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicemedia/sluice/internal/procfs"
)

// Source gives the processes' figures at scrape time. It reads state the server keeps anyway:
// nothing on the media path is updated for metrics.
type Source interface {
	Processes() []Process
}

// collector turns a Source's snapshot into metrics at each scrape.
type collector struct {
	src      Source
	children func() []int // nil: procfs.Children
	now      func() time.Time
}

var _ prometheus.Collector = (*collector)(nil)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range collected {
		ch <- d.d
	}
}

// emitter sends const metrics, leaving out a second series with the same labels (two SRT
// links of one role on one process keep the first), which would fail the whole scrape.
type emitter struct {
	ch   chan<- prometheus.Metric
	seen map[string]bool
}

func (e *emitter) emit(d *desc, v float64, labels ...string) {
	key := d.Name + "\x00" + strings.Join(labels, "\x00")
	if e.seen[key] {
		return
	}
	e.seen[key] = true
	e.ch <- prometheus.MustNewConstMetric(d.d, d.vt, v, labels...)
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	e := &emitter{ch: ch, seen: map[string]bool{}}
	now := c.now()
	for _, p := range c.src.Processes() {
		c.process(e, p, now)
	}
	if kids, err := c.kids(); err == nil {
		var n int
		var cpu time.Duration
		for _, k := range kids {
			if !k.Zombie() {
				n++
				cpu += k.CPU
			}
		}
		e.emit(mChildren, float64(n))
		e.emit(mChildrenCPU, cpu.Seconds())
	}
}

// kids reads the children's /proc/<pid>/stat; one that ended since it was listed is left out.
func (c *collector) kids() ([]procfs.Stat, error) {
	if c.children == nil {
		return procfs.Children(os.Getpid())
	}
	return procfs.ReadStats(c.children()), nil
}

func (c *collector) process(e *emitter, p Process, now time.Time) {
	l := []string{p.Module, p.ID, p.Name}
	for _, s := range States {
		v := 0.0
		if s == p.State {
			v = 1
		}
		e.emit(mState, v, p.Module, p.ID, p.Name, s)
	}
	e.emit(mRestarts, float64(p.Restarts), l...)
	if in := p.Input; in != nil {
		e.emit(mBitrate, in.Bitrate*1000/8, l...)
		e.emit(mFPS, in.FPS, l...)
		e.emit(mBytesIn, float64(in.BytesIn), l...)
		e.emit(mReaders, float64(in.Readers), l...)
		e.emit(mDropped, float64(in.Dropped), l...)
		e.emit(mDiscont, float64(in.Discontinuities), l...)
		if !in.LastMedia.IsZero() {
			e.emit(mSinceMedia, max(now.Sub(in.LastMedia).Seconds(), 0), l...)
		}
		if !in.Since.IsZero() {
			e.emit(mUptime, max(now.Sub(in.Since).Seconds(), 0), l...)
		}
	}
	if p.BytesOut >= 0 {
		e.emit(mBytesOut, float64(p.BytesOut), l...)
	}
	for _, k := range p.Links {
		ll := []string{p.Module, p.ID, p.Name, k.Role, k.Stream}
		e.emit(mSRTRTT, k.RTT.Seconds(), ll...)
		e.emit(mSRTLatency, k.Latency.Seconds(), ll...)
		e.emit(mSRTPeerLat, k.PeerLatency.Seconds(), ll...)
		e.emit(mSRTBandwidth, k.BandwidthKbps*1000/8, ll...)
		e.emit(mSRTSent, float64(k.PacketsSent), ll...)
		e.emit(mSRTRecv, float64(k.PacketsReceived), ll...)
		e.emit(mSRTLost, float64(k.PacketsLost), ll...)
		e.emit(mSRTRetrans, float64(k.PacketsRetransmitted), ll...)
		e.emit(mSRTDropped, float64(k.PacketsDropped), ll...)
		e.emit(mSRTBytesSent, float64(k.BytesSent), ll...)
		e.emit(mSRTBytesRecv, float64(k.BytesReceived), ll...)
	}
	for _, s := range p.Streams {
		sl := []string{p.Module, p.ID, p.Name, s.Stream}
		e.emit(mSessBytes, float64(s.BytesIn), sl...)
		if !s.Since.IsZero() {
			e.emit(mSessSeconds, max(now.Sub(s.Since).Seconds(), 0), sl...)
		}
		e.emit(mSessBitrate, s.Bitrate*1000/8, sl...)
		e.emit(mSessReaders, float64(s.Readers), sl...)
	}
	if pl := p.Player; pl != nil {
		e.emit(mPlSegments, float64(pl.Segments), l...)
		e.emit(mPlPlaylists, float64(pl.PlaylistRequests), l...)
		e.emit(mPlWindow, pl.Window.Seconds(), l...)
		e.emit(mPlWindowB, float64(pl.WindowBytes), l...)
	}
	if r := p.Recording; r != nil {
		e.emit(mRecFiles, float64(r.Files), l...)
		e.emit(mRecBytes, float64(r.BytesWritten), l...)
		e.emit(mRecErrors, float64(r.WriteErrors), l...)
		e.emit(mRecRepairs, float64(r.Repairs), l...)
	}
	if t := p.Transcode; t != nil {
		run := 0.0
		if t.Running {
			run = 1
		}
		e.emit(mTcRunning, run, l...)
		e.emit(mTcSpeed, t.Speed, l...)
		e.emit(mTcFPS, t.FPS, l...)
		e.emit(mTcCPU, t.CPU.Seconds(), l...)
	}
}
