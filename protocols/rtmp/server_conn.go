package rtmp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/flv"
)

// maxMessageStreams bounds the createStream calls a connection may make.
const maxMessageStreams = 8

// drainTime is how long a refused peer may keep sending before the connection closes.
const drainTime = 2 * time.Second

// errEnd ends a connection without an error to report: the peer deleted its stream.
var errEnd = errors.New("rtmp: stream deleted by the peer")

// serverConn is one connection to a Server: a publisher, a player or neither yet. Its
// goroutine reads and answers commands and ingests media; a player has a second goroutine
// that writes media, which serve waits for.
type serverConn struct {
	srv    *Server
	c      *conn
	log    *slog.Logger
	remote string

	connected bool
	app       string // connect's app name with its query, which may carry a password
	enhanced  bool   // the client announced enhanced RTMP codecs
	streams   uint32
	draining  bool

	mu       sync.Mutex // guards pubKey, pubSince and in for info
	in       *ingest
	pubKey   string
	pubID    uint32
	pubSince time.Time

	playCancel context.CancelFunc
	playDone   chan struct{}
}

func newServerConn(s *Server, nc net.Conn, log *slog.Logger) *serverConn {
	remote := nc.RemoteAddr().String()
	sc := &serverConn{
		srv:    s,
		c:      newConn(nc, orDefault(s.ReadTimeout, DefaultReadTimeout), orDefault(s.WriteTimeout, DefaultWriteTimeout)),
		log:    log.With("remote", remote),
		remote: remote,
	}
	sc.c.setSetupDeadline(time.Now().Add(sc.setupTimeout()))
	return sc
}

// serve runs the connection until it ends or ctx does.
func (sc *serverConn) serve(ctx context.Context) {
	defer func() {
		sc.stopPlay()
		sc.endPublish()
		sc.c.close()
	}()
	if err := sc.c.handshake(true); err != nil {
		sc.log.Debug("rtmp: connection ended", "error", sc.setupErr(err))
		return
	}
	for ctx.Err() == nil {
		msg, err := sc.c.readMessage()
		if err == nil && !sc.draining {
			err = sc.handle(ctx, msg)
		}
		if err != nil {
			sc.ended(sc.setupErr(err))
			return
		}
	}
}

// setupTimeout is how long a connection may take to publish or play.
func (sc *serverConn) setupTimeout() time.Duration {
	return orDefault(sc.srv.SetupTimeout, DefaultSetupTimeout)
}

// setupErr says so when err is the setup deadline passing.
func (sc *serverConn) setupErr(err error) error {
	var ne net.Error
	if !sc.c.setupBy.IsZero() && !time.Now().Before(sc.c.setupBy) && errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("rtmp: neither publishing nor playing %s after connecting: %w", sc.setupTimeout(), ErrSetupTimeout)
	}
	return err
}

// ended logs why the connection ended.
func (sc *serverConn) ended(err error) {
	active := sc.in != nil || sc.playDone != nil
	switch {
	case sc.draining:
	case active && !errors.Is(err, errEnd) && !isClosedErr(err):
		sc.log.Warn("rtmp: connection failed", "error", err)
	case active:
		sc.log.Info("rtmp: connection closed", "reason", err)
	default:
		sc.log.Debug("rtmp: connection ended", "error", err)
	}
}

func (sc *serverConn) handle(ctx context.Context, msg message) error {
	switch msg.Type {
	case msgCommandAMF0, msgCommandAMF3:
		cmd, err := parseCommand(msg)
		if err != nil {
			return err
		}
		return sc.command(ctx, cmd)
	case msgDataAMF0, msgDataAMF3:
		if sc.in != nil {
			if vals, _ := amfDecode(amfBody(msg)); len(vals) > 0 {
				sc.in.metadata(vals)
			}
		}
	case msgAudio, msgVideo:
		if sc.in != nil && msg.StreamID == sc.pubID {
			return sc.in.tag(flv.TagType(msg.Type), msg.Timestamp, msg.Body, time.Now())
		}
	case msgAggregate:
		if sc.in != nil && msg.StreamID == sc.pubID {
			return sc.in.aggregate(msg.Timestamp, msg.Body, time.Now())
		}
	}
	return nil
}

func (sc *serverConn) command(ctx context.Context, cmd command) error {
	if !sc.connected && cmd.Name != "connect" {
		return fmt.Errorf("rtmp: %q before connect: %w", cmd.Name, ErrMalformed)
	}
	switch cmd.Name {
	case "connect":
		return sc.connect(cmd)
	case "createStream":
		if sc.streams >= maxMessageStreams {
			return sc.c.writeCommand(csidCommand, 0, "_error", cmd.Txn, nil,
				amfObj{{"level", levelError}, {"code", "NetConnection.Call.Failed"}, {"description", "too many streams"}})
		}
		sc.streams++
		return sc.c.writeCommand(csidCommand, 0, "_result", cmd.Txn, nil, sc.streams)
	case "releaseStream", "FCPublish", "FCUnpublish", "getStreamLength":
		if cmd.Txn > 0 {
			return sc.c.writeCommand(csidCommand, 0, "_result", cmd.Txn, nil, nil)
		}
	case "publish":
		return sc.publish(ctx, cmd)
	case "play":
		return sc.play(ctx, cmd)
	case "deleteStream", "closeStream":
		if sc.in != nil || sc.playDone != nil {
			return errEnd
		}
	}
	return nil
}

func (sc *serverConn) connect(cmd command) error {
	if sc.connected {
		return fmt.Errorf("rtmp: second connect: %w", ErrMalformed)
	}
	obj := cmd.object()
	sc.app = str(obj, "app")
	app := stripQuery(sc.app)
	for len(app) > 0 && app[len(app)-1] == '/' {
		app = app[:len(app)-1]
	}
	if !sc.srv.checkApp(app) {
		if n, log := sc.srv.noteRefusal(&sc.srv.appLog); log {
			sc.log.Info("rtmp: connect refused: unknown app", "app", app, "refused", n)
		}
		err := sc.c.writeCommand(csidCommand, 0, "_error", cmd.Txn, nil, amfObj{
			{"level", levelError}, {"code", codeConnectRejected}, {"description", fmt.Sprintf("application %q not found", app)}})
		sc.refuse()
		return err
	}
	_, sc.enhanced = obj["fourCcList"]
	sc.connected = true
	if err := sc.c.writeControl(msgWinAckSize, ackWindow); err != nil {
		return err
	}
	if err := sc.c.write(csidControl, msgSetPeerBandwidth, 0, 0, []byte{ackWindow >> 24, ackWindow >> 16 & 0xff, ackWindow >> 8 & 0xff, ackWindow & 0xff, 2}); err != nil {
		return err
	}
	if err := sc.c.setChunkSize(outChunkSize); err != nil {
		return err
	}
	props := amfObj{{"fmsVer", "FMS/3,0,1,123"}, {"capabilities", 31}}
	if sc.enhanced {
		props = append(props, amfProp{"fourCcList", []any{"avc1", "hvc1"}})
	}
	return sc.c.writeCommand(csidCommand, 0, "_result", cmd.Txn, props, amfObj{
		{"level", levelStatus}, {"code", codeConnectSuccess}, {"description", "Connection succeeded."}, {"objectEncoding", 0}})
}

// validStream tells whether id names a stream the peer created.
func (sc *serverConn) validStream(id uint32) bool { return id >= 1 && id <= sc.streams }

func (sc *serverConn) publish(ctx context.Context, cmd command) error {
	name := cmd.streamName()
	key := stripQuery(name)
	switch {
	case !sc.validStream(cmd.StreamID):
		return fmt.Errorf("rtmp: publish on stream %d that was not created: %w", cmd.StreamID, ErrMalformed)
	case sc.in != nil || sc.playDone != nil:
		return fmt.Errorf("rtmp: publish on a busy connection: %w", ErrMalformed)
	case key == "":
		sc.refuseStatus(cmd.StreamID, codePublishBadName, "empty stream key")
		return nil
	}
	// Checked first: without the password nobody learns whether the key is busy.
	if why := sc.checkPassword(sc.srv.PublishPassword, name); why != "" {
		sc.refuseAuth(ctx, "publish", cmd.StreamID, codePublishBadName, key, why)
		return nil
	}
	pub, err := sc.srv.publish(key)
	if err != nil {
		code := codePublishFailed
		if errors.Is(err, stream.ErrBusy) {
			code = codePublishBadName
		}
		if n, log := sc.srv.noteRefusal(&sc.srv.publishLog); log {
			sc.log.Info("rtmp: publish refused", "key", key, "code", code, "error", err, "refused", n)
		}
		sc.refuseStatus(cmd.StreamID, code, err.Error())
		return nil
	}
	sc.c.setSetupDeadline(time.Time{})
	sc.mu.Lock()
	sc.in = newIngest(pub, sc.log.With("key", key))
	sc.pubKey, sc.pubID, sc.pubSince = key, cmd.StreamID, time.Now()
	sc.mu.Unlock()
	sc.log.Info("rtmp: publishing", "key", key)
	if h := sc.srv.Publishers; h != nil {
		h.PublisherConnected(key, sc.remote)
	}
	if err := sc.c.writeUserControl(ucStreamBegin, cmd.StreamID); err != nil {
		return err
	}
	return sc.c.writeStatus(cmd.StreamID, levelStatus, codePublishStart, key+" is now published")
}

// refuseStatus answers with an error status and ends the connection gently.
func (sc *serverConn) refuseStatus(streamID uint32, code, description string) {
	_ = sc.c.writeStatus(streamID, levelError, code, description)
	sc.refuse()
}

// refuse stops handling the peer's messages and lets them drain until it closes.
func (sc *serverConn) refuse() {
	sc.draining = true
	sc.c.drain(drainTime)
}

// endPublish detaches the publisher, if any.
func (sc *serverConn) endPublish() {
	sc.mu.Lock()
	in := sc.in
	sc.in = nil
	sc.mu.Unlock()
	if in != nil {
		if h := sc.srv.Publishers; h != nil {
			h.PublisherDisconnected(sc.pubKey, sc.remote)
		}
		in.close()
		sc.log.Info("rtmp: publishing ended", "key", sc.pubKey, "units", in.units)
	}
}

// info describes the connection's publication.
func (sc *serverConn) info() (StreamInfo, bool) {
	sc.mu.Lock()
	in, key, since := sc.in, sc.pubKey, sc.pubSince
	sc.mu.Unlock()
	if in == nil {
		return StreamInfo{}, false
	}
	st := in.pub.Stream().Stats()
	return StreamInfo{Key: key, RemoteAddr: sc.remote, Since: since, Bitrate: st.Bitrate, Readers: st.Readers}, true
}
