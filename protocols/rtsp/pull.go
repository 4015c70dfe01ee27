package rtsp

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"

	"github.com/sluicemedia/sluice/internal/stream"
)

// Pull reads the RTSP stream at o.URL (DESCRIBE, SETUP, PLAY) and publishes it into s as one
// publisher session. Credentials go in the URL (rtsp://user:pass@host/path); the query option
// rtsp_transport=tcp|udp chooses the transport and is not sent to the server; without it UDP
// is tried first and TCP taken when UDP brings nothing within 3 s. Pull returns nil when ctx
// ends, and when the remote ended the stream after media reached s; otherwise an error, such
// as a refused connection, a description with no carried format, or a stream that went quiet
// for ReadTimeout (10 s).
func Pull(ctx context.Context, s *stream.Stream, o PullOptions) error {
	ep, err := newEndpoint("pull", o.URL, o.Log)
	if err != nil {
		return err
	}
	u, transport, log := ep.u, ep.transport, ep.log

	var lossLog, errLog atomic.Int64
	c := &gortsplib.Client{
		Scheme:       u.Scheme,
		Host:         u.Host,
		Transport:    transport,
		ListenPacket: listenPacket,
		OnTransportSwitch: func(err error) {
			log.Info("rtsp: transport switched", "reason", err)
		},
		OnPacketsLost: func(lost uint64) {
			if allowAt(&lossLog) {
				log.Warn("rtsp: RTP packets lost", "lost", lost)
			}
		},
		OnDecodeError: func(err error) {
			if allowAt(&errLog) {
				log.Warn("rtsp: undecodable packet", "error", err)
			}
		},
	}
	if err := c.Start2(); err != nil {
		return ep.wrap(err)
	}
	stop := closeOnDone(ctx, c.Close)
	defer stop()

	fail := func(step string, err error) error { return ep.fail(ctx, step, err) }
	desc, _, err := c.Describe(u)
	if err != nil {
		return fail("describe", err)
	}
	st := newSessionTracks(desc.Medias)
	if err := st.err(); err != nil {
		return fail("describe", err)
	}
	st.logSkipped(log)
	if err := c.SetupAll(desc.BaseURL, st.medias); err != nil {
		return fail("setup", err)
	}
	pub, err := s.Publish()
	if err != nil {
		return fail("publish", err)
	}
	ing := newIngest(pub, st.tracks, log)
	defer ing.close()
	for _, m := range st.medias {
		for _, f := range m.Formats {
			c.OnPacketRTP(m, f, st.packetHandler(ing, f))
		}
	}
	if _, err := c.Play(nil); err != nil {
		return fail("play", err)
	}
	log.Info("rtsp: pulling", "medias", len(st.medias))
	err = c.Wait()
	switch {
	case ctx.Err() != nil:
		return nil
	case ing.units() > 0 && remoteEnded(err):
		log.Info("rtsp: remote ended the stream", "reason", err)
		return nil
	}
	return fail("read", err)
}

// remoteEnded tells whether a client's end came from the server closing the session, rather
// than from a timeout or a protocol error.
func remoteEnded(err error) bool {
	var udpTimeout liberrors.ErrClientUDPTimeout
	var tcpTimeout liberrors.ErrClientTCPTimeout
	if errors.As(err, &udpTimeout) || errors.As(err, &tcpTimeout) {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// closeOnDone calls closeFn when ctx ends. The returned func stops watching and waits for the
// watcher; it calls closeFn too, so that everything is closed when it returns.
func closeOnDone(ctx context.Context, closeFn func()) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			closeFn()
		case <-quit:
		}
	}()
	return func() {
		close(quit)
		wg.Wait()
		closeFn()
	}
}

// allowAt tells whether a message limited by last (unix nanoseconds) may be logged now: at
// most once a second.
func allowAt(last *atomic.Int64) bool {
	now := time.Now().UnixNano()
	prev := last.Load()
	return now-prev >= int64(time.Second) && last.CompareAndSwap(prev, now)
}
