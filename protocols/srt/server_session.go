package srt

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// servePublisher publishes what a publisher sends into the stream reserved for it at the
// handshake, and relays it to the stream's SRT receivers.
func (s *Server) servePublisher(ctx context.Context, conn *link.Conn, a admitted) {
	name := a.id.Name
	log := s.log.With("stream", name, "peer", conn.RemoteAddr().String())
	sctx, evict := context.WithCancel(ctx)
	ps := &pubSession{
		conn:     conn,
		evict:    evict,
		strm:     a.pub.Stream(),
		streamID: conn.StreamID(),
		addr:     conn.RemoteAddr().String(),
		since:    time.Now(),
	}
	s.mu.Lock()
	s.pubs[name] = ps
	rl := s.relayLocked(name)
	s.mu.Unlock()
	log.Info("publisher connected", "stream_id", ps.streamID)
	var left func()
	if h := s.cfg.Publishers; h != nil {
		h.PublisherConnected(ps.streamID, ps.addr)
		left = func() { h.PublisherDisconnected(ps.streamID, ps.addr) }
	}
	s.sessions.Go(func() {
		stop := context.AfterFunc(sctx, func() { _ = conn.Close() })
		res, err := publishTS(conn, a.pub, rl, log, left)
		stop()
		evict()
		_ = conn.Close()
		st := conn.Stats()
		s.mu.Lock()
		if s.pubs[name] == ps {
			delete(s.pubs, name)
		}
		s.dropRelayLocked(name)
		s.mu.Unlock()
		log.Info("publisher left", "reason", err, "units", res.units, "bytes", res.bytes,
			"duration", time.Since(ps.since).Round(time.Millisecond),
			"lost", st.PktRecvLoss, "retransmitted", st.PktRecvRetrans, "dropped", st.PktRecvDrop)
	})
}

// serveReceiver relays the stream to a receiver until either side leaves.
func (s *Server) serveReceiver(ctx context.Context, conn *link.Conn, a admitted) {
	name := a.id.Name
	log := s.log.With("stream", name, "peer", conn.RemoteAddr().String())
	s.mu.Lock()
	rl := s.relayLocked(name)
	t := rl.attach(conn)
	s.mu.Unlock()
	log.Info("receiver connected", "stream_id", conn.StreamID())
	s.sessions.Go(func() {
		select {
		case <-conn.Done():
		case <-ctx.Done():
		}
		s.mu.Lock()
		rl.detach(t)
		s.dropRelayLocked(name)
		s.mu.Unlock()
		_ = conn.Close()
		st := conn.Stats()
		logReceiverLeft(log, st)
	})
}

// logReceiverLeft logs a receiver's end with its link figures.
func logReceiverLeft(log *slog.Logger, st link.Stats) {
	log.Info("receiver left", "sent", st.PktSentUniq, "retransmitted", st.PktRetrans,
		"dropped", st.PktSendDrop, "rtt", st.RTT)
}

// StreamInfo describes a stream published to the server now.
type StreamInfo struct {
	// Name is the stream name, the key in the registry.
	Name string
	// StreamID is the stream id the publisher sent.
	StreamID string
	// PublisherAddr is the publisher's "ip:port".
	PublisherAddr string
	// Since is when the publisher connected.
	Since time.Time
	// Bitrate is the media payload bitrate in kbit/s over the last 2 s.
	Bitrate float64
	// Readers counts the stream's readers: this server's SRT receivers and any process.
	Readers int
	// Receivers counts this server's SRT receivers of the stream.
	Receivers int
	// Link holds the publisher's SRT link statistics.
	Link LinkStats
}

// ActiveStreams lists the streams published now, sorted by name.
func (s *Server) ActiveStreams() []StreamInfo {
	type entry struct {
		info StreamInfo
		ps   *pubSession
		rl   *relay
	}
	s.mu.Lock()
	entries := make([]entry, 0, len(s.pubs))
	for name, ps := range s.pubs {
		entries = append(entries, entry{StreamInfo{
			Name:          name,
			StreamID:      ps.streamID,
			PublisherAddr: ps.addr,
			Since:         ps.since,
		}, ps, s.relays[name]})
	}
	s.mu.Unlock()
	list := make([]StreamInfo, len(entries))
	for i, e := range entries {
		st := e.ps.strm.Stats()
		if e.rl != nil {
			e.info.Receivers = e.rl.receivers()
		}
		e.info.Bitrate, e.info.Readers = st.Bitrate, st.Readers+e.info.Receivers
		e.info.Link = e.ps.conn.Stats()
		list[i] = e.info
	}
	slices.SortFunc(list, func(a, b StreamInfo) int { return strings.Compare(a.Name, b.Name) })
	return list
}
