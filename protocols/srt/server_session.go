package srt

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	gosrt "github.com/datarhei/gosrt"

	"github.com/sluicemedia/sluice/internal/stream"
)

// acceptPublisher takes the stream name, then completes the handshake: a busy name is refused
// before the caller is connected, and the publisher already there goes on.
func (s *Server) acceptPublisher(ctx context.Context, req gosrt.ConnRequest, id StreamID, log *slog.Logger) {
	pub, err := s.reg.Publish(id.Name)
	if err != nil {
		reason := gosrt.REJX_ISE
		if errors.Is(err, stream.ErrBusy) {
			reason = gosrt.REJX_CONFLICT
		}
		s.reject(req, reason, req.RemoteAddr().String(), err.Error())
		return
	}
	conn, err := req.Accept()
	if err != nil {
		pub.Close()
		log.Warn("srt handshake failed", "error", err)
		return
	}
	ps := &pubSession{
		conn:     conn,
		strm:     pub.Stream(),
		streamID: req.StreamId(),
		addr:     conn.RemoteAddr().String(),
		since:    time.Now(),
	}
	s.mu.Lock()
	s.pubs[id.Name] = ps
	s.mu.Unlock()
	log.Info("publisher connected", "stream_id", ps.streamID)
	s.sessions.Go(func() {
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		res, err := publishTS(conn, pub, log)
		stop()
		_ = conn.Close()
		s.mu.Lock()
		if s.pubs[id.Name] == ps {
			delete(s.pubs, id.Name)
		}
		s.mu.Unlock()
		log.Info("publisher left", "reason", err, "units", res.units, "bytes", res.bytes,
			"duration", time.Since(ps.since).Round(time.Millisecond))
	})
}

// acceptReceiver opens a reader on a published stream and sends it as MPEG-TS. A stream with
// no publisher is refused.
func (s *Server) acceptReceiver(ctx context.Context, req gosrt.ConnRequest, id StreamID, log *slog.Logger) {
	addr := req.RemoteAddr().String()
	strm, ok := s.reg.Get(id.Name)
	if !ok || !strm.Publishing() {
		s.reject(req, gosrt.REJX_NOTFOUND, addr, "stream "+id.Name+" is not published")
		return
	}
	r, err := strm.NewReader("srt receiver " + addr)
	if err != nil {
		s.reject(req, gosrt.REJX_NOTFOUND, addr, err.Error())
		return
	}
	conn, err := req.Accept()
	if err != nil {
		r.Close()
		log.Warn("srt handshake failed", "error", err)
		return
	}
	s.mu.Lock()
	s.receivers[id.Name]++
	s.mu.Unlock()
	log.Info("receiver connected", "stream_id", req.StreamId())
	s.sessions.Go(func() {
		err := sendConn(ctx, conn, r, nil, s.cfg.MaxBW)
		r.Close()
		s.mu.Lock()
		if s.receivers[id.Name]--; s.receivers[id.Name] <= 0 {
			delete(s.receivers, id.Name)
		}
		s.mu.Unlock()
		log.Info("receiver left", "reason", err, "dropped", r.Dropped())
	})
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
	}
	s.mu.Lock()
	entries := make([]entry, 0, len(s.pubs))
	for name, ps := range s.pubs {
		entries = append(entries, entry{StreamInfo{
			Name:          name,
			StreamID:      ps.streamID,
			PublisherAddr: ps.addr,
			Since:         ps.since,
			Receivers:     s.receivers[name],
		}, ps})
	}
	s.mu.Unlock()
	list := make([]StreamInfo, len(entries))
	for i, e := range entries {
		st := e.ps.strm.Stats()
		e.info.Bitrate, e.info.Readers = st.Bitrate, st.Readers
		e.info.Link = linkStats(e.ps.conn)
		list[i] = e.info
	}
	slices.SortFunc(list, func(a, b StreamInfo) int { return strings.Compare(a.Name, b.Name) })
	return list
}
