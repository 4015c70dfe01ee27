package app

import (
	"sync"
	"time"

	"github.com/sluicemedia/sluice/api"
	"github.com/sluicemedia/sluice/internal/metrics"
	"github.com/sluicemedia/sluice/internal/player"
	"github.com/sluicemedia/sluice/internal/recorder"
	"github.com/sluicemedia/sluice/internal/supervisor"
	"github.com/sluicemedia/sluice/packager/segment"
)

var _ metrics.Source = (*Manager)(nil)

// Processes implements metrics.Source: every process started since the server did, running or
// stopped (until removed), read from the state its parts keep anyway.
func (m *Manager) Processes() []metrics.Process {
	runs, stopped := m.procs.Snapshot()
	out := make([]metrics.Process, 0, len(runs)+len(stopped))
	for _, r := range runs {
		out = append(out, r.figures())
	}
	for k, name := range stopped {
		out = append(out, metrics.Process{Module: string(k.m), ID: k.id, Name: name,
			State: string(supervisor.Stopped), BytesOut: -1})
	}
	return out
}

// figures is what the running process reports to a scrape.
func (r *running) figures() metrics.Process {
	st := r.status()
	p := metrics.Process{Module: string(r.key.m), ID: r.key.id, Name: r.name, State: st.State, Restarts: st.Restarts, BytesOut: -1}
	if r.p.Stream != nil {
		s := r.p.Stream.Stats()
		p.Input = &metrics.Input{Bitrate: s.Bitrate, FPS: s.FPS, BytesIn: s.BytesIn, Readers: s.Readers,
			Dropped: s.Dropped, Discontinuities: s.Discontinuities, LastMedia: s.LastUnit}
		if s.Publishing {
			p.Input.Since = s.Since
		}
	}
	for _, part := range r.parts() {
		if part.Links == nil {
			continue
		}
		for _, l := range part.Links() {
			p.Links = append(p.Links, metricsLink(l, ""))
			if l.Role == "output" {
				p.BytesOut = max(p.BytesOut, 0) + int64(l.BytesSent)
			}
		}
	}
	for _, f := range r.p.Figures {
		f(&p)
	}
	return p
}

// parts lists the pipeline's parts, the input first.
func (r *running) parts() []Part {
	if r.p.Input == nil {
		return r.p.Sinks
	}
	return append([]Part{*r.p.Input}, r.p.Sinks...)
}

// metricsLink converts an SRT link's API figures.
func metricsLink(l api.SRTLink, stream string) metrics.Link {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	return metrics.Link{Role: l.Role, Stream: stream, RTT: ms(l.RTTMs), Latency: time.Duration(l.LatencyMs) * time.Millisecond,
		PeerLatency: time.Duration(l.PeerLatencyMs) * time.Millisecond, BandwidthKbps: l.BandwidthKbps,
		PacketsSent: l.PacketsSent, PacketsReceived: l.PacketsReceived, PacketsLost: l.PacketsLost,
		PacketsRetransmitted: l.PacketsRetransmitted, PacketsDropped: l.PacketsDropped,
		BytesSent: l.BytesSent, BytesReceived: l.BytesReceived}
}

// addBytesOut adds n to a process's output bytes.
func addBytesOut(p *metrics.Process, n int64) { p.BytesOut = max(p.BytesOut, 0) + n }

// registrySessions reports the streams published into a server module's registry.
func registrySessions(h *hub, serverID string) func(*metrics.Process) {
	return func(p *metrics.Process) {
		for _, s := range h.registry(serverID).List() {
			if st := s.Stats(); st.Publishing {
				p.Streams = append(p.Streams, metrics.Session{Stream: s.Name(), Since: st.Since, BytesIn: st.BytesIn,
					Bitrate: st.Bitrate, Readers: st.Readers})
			}
		}
	}
}

// playerFigures reports a player's segment stores and counters.
func playerFigures(stores []*segment.Store, pc *player.Counters) func(*metrics.Process) {
	return func(p *metrics.Process) {
		pl := &metrics.Player{PlaylistRequests: pc.Playlists()}
		for _, st := range stores {
			s := st.Stats()
			pl.Segments += s.Added
			pl.WindowBytes += s.Bytes
			var d time.Duration
			for _, seg := range st.Snapshot().Segments {
				d += seg.Duration
			}
			pl.Window = max(pl.Window, d)
		}
		p.Player = pl
		addBytesOut(p, pc.Served())
	}
}

// recordingFigures reports a file recording's counters, and the repairs done at start for it.
func recordingFigures(rc *recorder.Counters, bootRepairs func() int64) func(*metrics.Process) {
	return func(p *metrics.Process) {
		p.Recording = &metrics.Recording{Files: rc.Files.Load(), BytesWritten: rc.ClosedBytes.Load() + rc.OpenBytes.Load(),
			WriteErrors: rc.WriteErrors.Load(), Repairs: rc.Repairs.Load() + bootRepairs()}
	}
}

// bootRepairs counts, per recording id, the files repaired at start after a crash.
type bootRepairs struct {
	mu sync.Mutex
	n  map[string]int64
}

func (b *bootRepairs) add(recordID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == nil {
		b.n = map[string]int64{}
	}
	b.n[recordID]++
}

func (b *bootRepairs) get(recordID string) int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n[recordID]
}
