package rtmp

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/flv"
	protoingest "github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// ingest turns the audio, video and data messages of one publishing session into access
// units written to a stream.Publisher: the flv Depacketizer rebuilds the tracks and the
// timestamps, the Publisher normalises them. It belongs to the connection's reading goroutine.
type ingest struct {
	pub      *stream.Publisher
	log      *slog.Logger
	depack   *flv.Depacketizer
	tracks   bool // SetTracks done
	units    int64
	badTags  int64
	loggedAt time.Time
}

func newIngest(pub *stream.Publisher, log *slog.Logger) *ingest {
	return &ingest{pub: pub, log: log, depack: flv.NewDepacketizer()}
}

// metadata takes the values of a data message; onMetaData tells which tracks to wait for.
func (in *ingest) metadata(vals []any) {
	if in.tracks {
		return
	}
	if m, ok := parseMetaData(vals); ok {
		if video, audio, ok := metaKinds(m); ok {
			in.depack.Expect(video, audio)
		}
	}
}

// tag takes one audio or video message body, which the access units keep.
func (in *ingest) tag(typ flv.TagType, ts uint32, body []byte, now time.Time) error {
	err := in.depack.Push(flv.Tag{Type: typ, Timestamp: ts, Body: body})
	if errors.Is(err, flv.ErrCodecChanged) {
		return err
	}
	if err != nil {
		in.badTags++
		if now.Sub(in.loggedAt) >= 10*time.Second {
			in.loggedAt = now
			in.log.Warn("rtmp: tags ignored", "error", err, "total", in.badTags)
		}
	}
	if !in.tracks {
		tracks := in.depack.Tracks()
		if tracks == nil {
			return nil
		}
		if err := in.pub.SetTracks(tracks); err != nil {
			return err
		}
		in.tracks = true
		in.log.Info("rtmp: tracks", "tracks", protoingest.Describe(tracks))
	}
	for au := in.depack.Next(); au != nil; au = in.depack.Next() {
		au.Arrival = now
		if err := in.pub.Write(au); err != nil {
			return err
		}
		in.units++
	}
	return nil
}

// aggregate takes an aggregate message: FLV tags back to back, each with its 11-byte header
// and PreviousTagSize, timed relative to the message.
func (in *ingest) aggregate(ts uint32, body []byte, now time.Time) error {
	var base uint32
	for first := true; len(body) >= 11; first = false {
		typ := flv.TagType(body[0] & 0x1f)
		n := int(uint24(body[1:]))
		tagTS := uint24(body[4:]) | uint32(body[7])<<24
		if len(body) < 11+n {
			return fmt.Errorf("rtmp: aggregate tag of %d bytes in %d: %w", n, len(body)-11, ErrMalformed)
		}
		if first {
			base = tagTS
		}
		if typ == flv.TagAudio || typ == flv.TagVideo {
			if err := in.tag(typ, ts+tagTS-base, body[11:11+n:11+n], now); err != nil {
				return err
			}
		}
		body = body[min(len(body), 11+n+4):]
	}
	return nil
}

// flowed tells whether media reached the stream.
func (in *ingest) flowed() bool { return in != nil && in.units > 0 }

// close detaches the publisher.
func (in *ingest) close() {
	if in != nil {
		in.pub.Close()
	}
}
