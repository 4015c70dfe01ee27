package rtsp

import (
	"log/slog"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"github.com/pion/rtp"

	"github.com/sluicemedia/sluice/internal/budget"
	"github.com/sluicemedia/sluice/internal/connlimit"
	"github.com/sluicemedia/sluice/internal/stream"
)

// handler answers the requests of a Server's clients. gortsplib calls it from the goroutines
// of connections and sessions.
type handler struct {
	strm *stream.Stream
	log  *slog.Logger
	srv  *gortsplib.Server
	// user and pass are the credentials asked of every client, when user is set.
	user, pass string

	// claimTimeout is how long a publisher that announced may take to start recording
	// before another one may take its place.
	claimTimeout time.Duration

	mu      sync.Mutex
	pub     *gortsplib.ServerSession // the session that announced, until it closes
	pubAt   time.Time                // when pub announced
	tracks  *sessionTracks           // what pub announced
	ing     *ingest                  // while pub records
	out     *gortsplib.ServerStream  // what readers receive while pub records
	readers map[*gortsplib.ServerSession]struct{}

	// Session caps: every session counts from its opening to its closing.
	lim      sessionLimits
	sessions map[*gortsplib.ServerSession]*sessionEntry
	perAddr  map[netip.Addr]int
	capLog   atomic.Int64    // unix nanoseconds of the last refusal logged
	authLog  budget.LogLimit // requests with wrong credentials; under mu
	askLog   budget.LogLimit // requests without credentials, answered a challenge; under mu

	nreaders atomic.Int32 // len(readers), read per packet
	fwdErr   atomic.Int64 // unix nanoseconds of the last forwarding error logged
	lossLog  atomic.Int64 // same for lost packets and decode errors
}

// sessionLimits are the handler's caps on sessions and the setup timeout of connections.
type sessionLimits struct {
	maxSessions, maxPerAddr int
	setupTimeout            time.Duration
}

// sessionEntry is what the handler knows of an open session.
type sessionEntry struct {
	key   netip.Addr
	keyed bool
	// over is set when the session opened past a cap: its ANNOUNCE or SETUP is refused.
	over bool
	// conn is the connection whose setup deadline the session lifted by playing or
	// recording, to be rearmed when the session ends.
	conn *guardConn
}

func newHandler(strm *stream.Stream, log *slog.Logger, claimTimeout time.Duration, lim sessionLimits) *handler {
	return &handler{strm: strm, log: log, claimTimeout: claimTimeout, lim: lim,
		readers:  make(map[*gortsplib.ServerSession]struct{}),
		sessions: make(map[*gortsplib.ServerSession]*sessionEntry),
		perAddr:  make(map[netip.Addr]int)}
}

var (
	_ gortsplib.ServerHandlerOnAnnounce         = (*handler)(nil)
	_ gortsplib.ServerHandlerOnSetup            = (*handler)(nil)
	_ gortsplib.ServerHandlerOnRecord           = (*handler)(nil)
	_ gortsplib.ServerHandlerOnDescribe         = (*handler)(nil)
	_ gortsplib.ServerHandlerOnPlay             = (*handler)(nil)
	_ gortsplib.ServerHandlerOnSessionOpen      = (*handler)(nil)
	_ gortsplib.ServerHandlerOnSessionClose     = (*handler)(nil)
	_ gortsplib.ServerHandlerOnPacketsLost      = (*handler)(nil)
	_ gortsplib.ServerHandlerOnDecodeError      = (*handler)(nil)
	_ gortsplib.ServerHandlerOnStreamWriteError = (*handler)(nil)
)

// sessionLog narrows the log to one client.
func (h *handler) sessionLog(c *gortsplib.ServerConn, path string) *slog.Logger {
	return h.log.With("remote", c.NetConn().RemoteAddr().String(), "path", path)
}

// unauthorized is the answer to a request without the right credentials; gortsplib adds the
// authentication challenge.
func unauthorized() (*base.Response, error) {
	return &base.Response{StatusCode: base.StatusUnauthorized}, liberrors.ErrServerAuth{}
}

// OnSessionOpen counts a session against the caps; one past a cap is marked, and its
// ANNOUNCE or SETUP is refused with 503. It stays counted until it closes (with its
// connection, at the latest at the setup timeout).
func (h *handler) OnSessionOpen(ctx *gortsplib.ServerHandlerOnSessionOpenCtx) {
	e := &sessionEntry{}
	e.key, e.keyed = connlimit.AddrKey(ctx.Conn.NetConn().RemoteAddr())
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sessions[ctx.Session] = e
	n := 0
	if e.keyed {
		h.perAddr[e.key]++
		n = h.perAddr[e.key]
	}
	e.over = (h.lim.maxSessions > 0 && len(h.sessions) > h.lim.maxSessions) ||
		(h.lim.maxPerAddr > 0 && n > h.lim.maxPerAddr)
}

// overCap tells whether a session opened past a cap, logging it at most once a second. h.mu
// held.
func (h *handler) overCap(ss *gortsplib.ServerSession, c *gortsplib.ServerConn) bool {
	e := h.sessions[ss]
	if e == nil || !e.over {
		return false
	}
	if allowAt(&h.capLog) {
		h.log.Warn("rtsp: session refused: cap reached", "remote", c.NetConn().RemoteAddr().String(),
			"sessions", len(h.sessions), "max_sessions", h.lim.maxSessions, "max_sessions_per_addr", h.lim.maxPerAddr)
	}
	return true
}

// streaming lifts the setup deadline of the session's connection. h.mu held.
func (h *handler) streaming(ss *gortsplib.ServerSession, c *gortsplib.ServerConn) {
	g, ok := c.NetConn().(*guardConn)
	if !ok {
		return
	}
	g.stream()
	if e := h.sessions[ss]; e != nil {
		e.conn = g
	}
}

// OnAnnounce reserves the publisher's place, or refuses a second publisher.
func (h *handler) OnAnnounce(ctx *gortsplib.ServerHandlerOnAnnounceCtx) (*base.Response, error) {
	if !h.authorized(ctx.Conn, ctx.Request) {
		return unauthorized()
	}
	log := h.sessionLog(ctx.Conn, ctx.Path)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.overCap(ctx.Session, ctx.Conn) {
		return &base.Response{StatusCode: base.StatusServiceUnavailable}, nil
	}
	if h.pub != nil && h.pub != ctx.Session {
		if h.ing != nil || time.Since(h.pubAt) < h.claimTimeout {
			log.Warn("rtsp: publisher refused: another one is publishing")
			return &base.Response{StatusCode: base.StatusServiceUnavailable}, nil
		}
		// The one that announced never recorded: it loses its place.
		log.Warn("rtsp: dropping a publisher that announced but did not record")
		h.pub.Close()
	}
	st := newSessionTracks(ctx.Description.Medias)
	if err := st.err(); err != nil {
		log.Warn("rtsp: publisher refused", "error", err)
		return &base.Response{StatusCode: base.StatusUnsupportedMediaType}, nil
	}
	st.logSkipped(log)
	h.pub, h.pubAt, h.tracks = ctx.Session, time.Now(), st
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// OnSetup accepts the publisher's medias, and gives readers the stream being recorded.
func (h *handler) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (*base.Response, *gortsplib.ServerStream, error) {
	// A publisher's SETUP follows its ANNOUNCE, which was authorized; a reader's is checked
	// here, before h.mu (a wrong one waits authDelay).
	preRecord := ctx.Session.State() == gortsplib.ServerSessionStatePreRecord
	if !preRecord && !h.authorized(ctx.Conn, ctx.Request) {
		res, err := unauthorized()
		return res, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if preRecord {
		if ctx.Session != h.pub {
			return &base.Response{StatusCode: base.StatusMethodNotValidInThisState}, nil, nil
		}
		return &base.Response{StatusCode: base.StatusOK}, nil, nil
	}
	if h.overCap(ctx.Session, ctx.Conn) {
		return &base.Response{StatusCode: base.StatusServiceUnavailable}, nil, nil
	}
	if h.out == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, h.out, nil
}

// OnRecord starts a publisher session of the stream and routes the packets to it and to the
// readers.
func (h *handler) OnRecord(ctx *gortsplib.ServerHandlerOnRecordCtx) (*base.Response, error) {
	log := h.sessionLog(ctx.Conn, ctx.Path)
	h.mu.Lock()
	defer h.mu.Unlock()
	if ctx.Session != h.pub || h.ing != nil {
		return &base.Response{StatusCode: base.StatusMethodNotValidInThisState}, nil
	}
	pub, err := h.strm.Publish()
	if err != nil {
		log.Warn("rtsp: publisher refused", "error", err)
		return &base.Response{StatusCode: base.StatusServiceUnavailable}, nil
	}
	out := &gortsplib.ServerStream{Server: h.srv, Desc: ctx.Session.AnnouncedDescription()}
	if err := out.Initialize(); err != nil {
		log.Warn("rtsp: cannot serve readers", "error", err)
		out = nil
	}
	ing := newIngest(pub, h.tracks.tracks, log)
	for _, m := range ctx.Session.SetuppedMedias() {
		for _, f := range m.Formats {
			ctx.Session.OnPacketRTP(m, f, h.packetHandler(ing, out, m, f))
		}
	}
	h.ing, h.out = ing, out
	h.streaming(ctx.Session, ctx.Conn)
	transport := "?"
	if t := ctx.Session.SetuppedTransport(); t != nil {
		transport = t.String()
	}
	log.Info("rtsp: publisher recording", "transport", transport, "medias", len(ctx.Session.SetuppedMedias()))
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// packetHandler returns the callback of one format of the publisher: ingest, then readers.
func (h *handler) packetHandler(ing *ingest, out *gortsplib.ServerStream, m *description.Media,
	f format.Format,
) func(*rtp.Packet) {
	in := h.tracks.packetHandler(ing, f)
	return func(pkt *rtp.Packet) {
		in(pkt)
		// Forwarding marshals each packet: skip it while nobody reads.
		if out == nil || h.nreaders.Load() == 0 {
			return
		}
		if err := out.WritePacketRTP(m, pkt); err != nil && allowAt(&h.fwdErr) {
			h.log.Warn("rtsp: forward to readers", "error", err)
		}
	}
}

// OnDescribe gives the stream being recorded, if any.
func (h *handler) OnDescribe(ctx *gortsplib.ServerHandlerOnDescribeCtx) (*base.Response, *gortsplib.ServerStream, error) {
	if !h.authorized(ctx.Conn, ctx.Request) {
		res, err := unauthorized()
		return res, nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, h.out, nil
}

// OnPlay counts a reader.
func (h *handler) OnPlay(ctx *gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out == nil || ctx.Session.SetuppedStream() != h.out {
		return &base.Response{StatusCode: base.StatusNotFound}, nil
	}
	h.readers[ctx.Session] = struct{}{}
	h.nreaders.Store(int32(len(h.readers)))
	h.streaming(ctx.Session, ctx.Conn)
	transport := "?"
	if t := ctx.Session.SetuppedTransport(); t != nil {
		transport = t.String()
	}
	h.sessionLog(ctx.Conn, ctx.Path).Info("rtsp: reader playing", "transport", transport, "readers", len(h.readers))
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// OnSessionClose ends the publisher session when the publisher leaves, forgets readers, and
// uncounts the session.
func (h *handler) OnSessionClose(ctx *gortsplib.ServerHandlerOnSessionCloseCtx) {
	h.mu.Lock()
	if e := h.sessions[ctx.Session]; e != nil {
		delete(h.sessions, ctx.Session)
		if e.keyed {
			if h.perAddr[e.key]--; h.perAddr[e.key] <= 0 {
				delete(h.perAddr, e.key)
			}
		}
		if e.conn != nil {
			// The connection may stay (UDP transport): it has to start again in time.
			e.conn.rearm(h.lim.setupTimeout)
		}
	}
	if _, ok := h.readers[ctx.Session]; ok {
		delete(h.readers, ctx.Session)
		h.nreaders.Store(int32(len(h.readers)))
	}
	if ctx.Session != h.pub {
		h.mu.Unlock()
		return
	}
	out := h.endPublisher()
	h.mu.Unlock()
	h.log.Info("rtsp: publisher left", "reason", ctx.Error)
	if out != nil {
		out.Close()
	}
}

// endPublisher ends the publisher session, so that the next publisher finds the stream free,
// and returns the readers' stream for the caller to close once h.mu is released. h.mu held.
func (h *handler) endPublisher() *gortsplib.ServerStream {
	if h.ing != nil {
		h.ing.close()
	}
	out := h.out
	h.pub, h.tracks, h.ing, h.out = nil, nil, nil, nil
	return out
}

// shutdown ends what is left once the gortsplib server is closed.
func (h *handler) shutdown() {
	h.mu.Lock()
	out := h.endPublisher()
	h.mu.Unlock()
	if out != nil {
		out.Close()
	}
}

// OnPacketsLost logs lost RTP packets, at most once a second.
func (h *handler) OnPacketsLost(ctx *gortsplib.ServerHandlerOnPacketsLostCtx) {
	if allowAt(&h.lossLog) {
		h.log.Warn("rtsp: RTP packets lost", "lost", ctx.Lost)
	}
}

// OnDecodeError logs undecodable packets, at most once a second.
func (h *handler) OnDecodeError(ctx *gortsplib.ServerHandlerOnDecodeErrorCtx) {
	if allowAt(&h.lossLog) {
		h.log.Warn("rtsp: undecodable packet", "error", ctx.Error)
	}
}

// OnStreamWriteError logs a reader that cannot keep up, at most once a second.
func (h *handler) OnStreamWriteError(ctx *gortsplib.ServerHandlerOnStreamWriteErrorCtx) {
	if allowAt(&h.fwdErr) {
		h.log.Warn("rtsp: write to reader", "error", ctx.Error)
	}
}
