package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/protocols/srt/link"
)

// srtLatency is the SRT latency of every peer, sluice's default; ffmpeg's URL option is in microseconds.
const srtLatency = 200 * time.Millisecond

// dialSRT calls addr as a publisher with streamID, retrying until ctx ends.
func dialSRT(ctx context.Context, addr, streamID string) (*link.Conn, error) {
	conf := link.Config{StreamID: streamID, Latency: srtLatency, ConnectTimeout: time.Second, MaxBW: -1}
	for {
		conn, err := link.Dial(ctx, addr, conf)
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("srt dial %s: %w", addr, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// publishSRT dials every address in addrs (the same streamID to each) and paces c into them
// at once, one schedule for all, until the clip or ctx ends. A connection whose write fails is
// left behind and the others go on; its error is returned at the end.
func publishSRT(ctx context.Context, addrs []string, streamID string, c *Clip, s *Sent) error {
	conns := make([]*link.Conn, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Go(func() { conns[i], errs[i] = dialSRT(ctx, addr, streamID) })
	}
	wg.Wait()
	fw := &fanWriter{}
	for _, conn := range conns {
		if conn != nil {
			fw.add(conn)
		}
	}
	defer func() {
		// Close lingers until what was sent is acknowledged (at most a second).
		for _, conn := range conns {
			if conn != nil {
				_ = conn.Close()
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := Pace(ctx, c, fw, s); err != nil {
		return err
	}
	return fw.Err()
}

// srtSink is a receiver: an SRT listener that takes one caller and counts what it sends.
type srtSink struct {
	Port int
	ln   *link.Listener
	mu   sync.Mutex
	cnt  TSCount
	done chan struct{}
}

// listenSRT starts a receiver on 127.0.0.1:port.
func listenSRT(port int) (*srtSink, error) {
	conf := link.Config{Latency: srtLatency}
	ln, err := link.Listen(fmt.Sprintf("127.0.0.1:%d", port), conf, nil)
	if err != nil {
		return nil, fmt.Errorf("srt receiver on port %d: %w", port, err)
	}
	k := &srtSink{Port: port, ln: ln, done: make(chan struct{})}
	go k.run()
	return k, nil
}

// run accepts callers one after another and counts their packets.
func (k *srtSink) run() {
	defer close(k.done)
	buf := make([]byte, 2048)
	for {
		conn, _, err := k.ln.Accept(context.Background())
		if err != nil {
			return
		}
		for {
			n, err := conn.Read(buf)
			if err != nil {
				break
			}
			k.mu.Lock()
			k.cnt.Feed(buf[:n])
			k.mu.Unlock()
		}
		_ = conn.Close()
	}
}

// Count is what the receiver got so far.
func (k *srtSink) Count() TSCount {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cnt
}

// Received is what the receiver got so far.
func (k *srtSink) Received() Received {
	c := k.Count()
	first := c.FirstPTS
	if c.Packets == 0 {
		first = -1 // Feed never ran: the counter is still its zero value
	}
	return Received{Frames: c.Frames, CCErrors: c.CCErrors, FirstPTS: first, LastPTS: c.LastPTS, FirstErr: c.FirstErr}
}

// Kind is the receiver's protocol.
func (k *srtSink) Kind() string { return recvSRT }

// Label names the receiver in logs.
func (k *srtSink) Label() string { return fmt.Sprintf("srt 127.0.0.1:%d", k.Port) }

// Close stops the receiver.
func (k *srtSink) Close() {
	_ = k.ln.Close()
	select {
	case <-k.done:
	case <-time.After(2 * time.Second):
	}
}

// errNoPlaylist is returned by a playlist source that has none yet.
var errNoPlaylist = errors.New("no playlist yet")
