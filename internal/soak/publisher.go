package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/protocols/rtmp"
	"github.com/sluicemedia/sluice/protocols/srt"
	"github.com/sluicemedia/sluice/protocols/udp"
)

// Protocols a publisher speaks.
const (
	ProtoSRT  = "srt"
	ProtoRTMP = "rtmp"
	ProtoUDP  = "udp"
)

// Target is where a publisher sends: an srt:// URL (with its streamid), an rtmp:// URL and
// key, or a udp:// URL.
type Target struct {
	Proto string
	URL   string
	Key   string // RTMP stream key
}

func (t Target) String() string {
	if t.Key != "" {
		return t.URL + "/" + t.Key
	}
	return t.URL
}

// drainTimeout bounds how long a sender may take to send what is queued once the clip ends.
const drainTimeout = 10 * time.Second

// Publish connects to t with the repository's own protocol client, sends the first d of the
// clip in real time and drops the connection. With loop set it sends the clip over and over,
// timestamps increasing, until ctx ends. It returns nil once the clip was sent, or when ctx
// ended, and the sender's error when the connection failed or was refused.
func Publish(ctx context.Context, t Target, clip *Clip, d time.Duration, loop bool, log *slog.Logger) error {
	s := stream.New("soak-publisher", stream.Options{QueueSize: 4096, Log: log})
	defer s.Close()
	r, err := s.NewReader("sender")
	if err != nil {
		return fmt.Errorf("publish to %s: %w", t, err)
	}
	defer r.Close()
	pub, err := s.Publish()
	if err != nil {
		return fmt.Errorf("publish to %s: %w", t, err)
	}
	if err := pub.SetTracks(clip.Tracks); err != nil {
		return fmt.Errorf("publish to %s: %w", t, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- send(sctx, t, r, clip.Tracks, log) }()

	if err := pace(ctx, pub, clip, d, loop, done); err != nil {
		cancel()
		<-done
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("publish to %s: %w", t, err)
	}
	// The sender sends what is queued, then sees the end of the stream and hangs up.
	s.Close()
	select {
	case err := <-done:
		if err != nil && ctx.Err() == nil && !hangUp(err) {
			return fmt.Errorf("publish to %s: %w", t, err)
		}
		return nil
	case <-time.After(drainTimeout):
		cancel()
		<-done
		return fmt.Errorf("publish to %s: sender still busy %v after the clip ended", t, drainTimeout)
	}
}

// hangUp tells whether a sender's error, once the whole clip was written and the stream
// closed, is only the end of the connection: srt.Send passes on the reader's io.EOF, and
// rtmp.Push reports the read side of the connection it closed itself (net.ErrClosed) or the
// server's hang-up after deleteStream (io.EOF).
func hangUp(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// errSenderEnded is the sender ending by itself before the clip was sent.
var errSenderEnded = errors.New("sender ended before the clip was sent")

// pace writes the clip's units at their times from now until d has been sent (or, with loop,
// until ctx ends). It stops early with the sender's error when the sender ends.
func pace(ctx context.Context, pub *stream.Publisher, clip *Clip, d time.Duration, loop bool, done <-chan error) error {
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for round := 0; ; round++ {
		base := time.Duration(round) * clip.Duration
		for i, au := range clip.Units {
			at := base + clip.At[i]
			if !loop && at >= d {
				return nil
			}
			if wait := time.Until(start.Add(at)); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return ctx.Err()
				case err := <-done:
					if err == nil {
						err = errSenderEnded
					}
					return err
				}
			}
			// The stream normalises timestamps in place: each write gets its own copy.
			cp := *au
			shift := media.Rescale(int64(base/time.Microsecond), int(time.Second/time.Microsecond), clip.Tracks[au.Track].ClockRate)
			cp.DTS += shift
			cp.PTS += shift
			cp.Arrival = time.Now()
			if err := pub.Write(&cp); err != nil {
				return err
			}
		}
		if !loop {
			return nil
		}
	}
}

// send runs the protocol's sender until the stream ends.
func send(ctx context.Context, t Target, r *stream.Reader, tracks []media.Track, log *slog.Logger) error {
	switch t.Proto {
	case ProtoSRT:
		return srt.Send(ctx, r, tracks, srt.SendOptions{URL: t.URL, Log: log})
	case ProtoRTMP:
		return rtmp.Push(ctx, r, tracks, rtmp.PushOptions{URL: t.URL, Key: t.Key})
	case ProtoUDP:
		return udp.Send(ctx, r, tracks, udp.SendOptions{URL: t.URL, Log: log})
	}
	return fmt.Errorf("protocol %q: want srt, rtmp or udp", t.Proto)
}
