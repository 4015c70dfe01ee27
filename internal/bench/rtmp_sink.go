package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/rtmp"
)

// rtmpSink is a receiver: the repo's RTMP server on its own port, taking one publication under
// Key, whose video frames a stream reader counts.
type rtmpSink struct {
	Port int
	Key  string

	strm   *stream.Stream
	reader *stream.Reader
	cancel context.CancelFunc
	served chan error    // Run's result
	read   chan struct{} // closed when the counting goroutine returned

	mu  sync.Mutex
	got Received
}

// listenRTMP starts a receiver on 127.0.0.1:port for rtmp://127.0.0.1:port/live/key; log takes
// the server's connection events and the reader's drop warnings.
func listenRTMP(port int, key string, log *slog.Logger) (*rtmpSink, error) {
	reg := stream.NewRegistry(stream.Options{Log: log})
	strm := reg.GetOrCreate(key)
	// The reader exists before any publisher: it sees every unit from the first key frame on.
	r, err := strm.NewReader("bench receiver")
	if err != nil {
		return nil, fmt.Errorf("rtmp receiver on port %d: %w", port, err)
	}
	srv := &rtmp.Server{ListenAddr: fmt.Sprintf("127.0.0.1:%d", port), Registry: reg, Log: log}
	ctx, cancel := context.WithCancel(context.Background())
	k := &rtmpSink{Port: port, Key: key, strm: strm, reader: r, cancel: cancel,
		served: make(chan error, 1), read: make(chan struct{}), got: Received{FirstPTS: -1}}
	go func() { k.served <- srv.Run(ctx) }()
	select {
	case <-srv.Ready():
	case err := <-k.served:
		cancel()
		r.Close()
		if err == nil {
			err = errors.New("server ended before listening")
		}
		return nil, fmt.Errorf("rtmp receiver on port %d: %w", port, err)
	case <-time.After(5 * time.Second):
		cancel()
		r.Close()
		<-k.served
		return nil, fmt.Errorf("rtmp receiver on port %d: not listening after 5 s", port)
	}
	go k.count(ctx)
	return k, nil
}

// count reads the stream until the receiver closes, counting video frames.
func (k *rtmpSink) count(ctx context.Context) {
	defer close(k.read)
	for {
		au, err := k.reader.Read(ctx)
		if err != nil {
			return
		}
		tracks := k.strm.Tracks()
		if au.Track < 0 || au.Track >= len(tracks) || !tracks[au.Track].Codec.IsVideo() {
			continue
		}
		pts := media.Rescale(au.PTS, tracks[au.Track].ClockRate, 90000)
		k.mu.Lock()
		k.got.Frames++
		if k.got.FirstPTS < 0 {
			k.got.FirstPTS = pts
		}
		k.got.LastPTS = pts
		k.mu.Unlock()
	}
}

// Received is what the receiver got so far.
func (k *rtmpSink) Received() Received {
	k.mu.Lock()
	defer k.mu.Unlock()
	got := k.got
	got.Dropped = k.reader.Dropped()
	return got
}

// Kind is the receiver's protocol.
func (k *rtmpSink) Kind() string { return recvRTMP }

// Label names the receiver in logs.
func (k *rtmpSink) Label() string { return fmt.Sprintf("rtmp 127.0.0.1:%d/live/%s", k.Port, k.Key) }

// Close stops the server and the reader.
func (k *rtmpSink) Close() {
	k.cancel()
	k.reader.Close()
	select {
	case <-k.served:
	case <-time.After(2 * time.Second):
	}
	<-k.read
}
