package httpts

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/flv"
	"github.com/sluicemedia/sluice/protocols/internal/ingest"
)

// Body ingestion limits.
const (
	readChunk = 64 << 10
	// maxProbe is how many bytes may go by without a known program before the body is
	// refused: a sender of something that is not MPEG-TS cannot hold the input.
	maxProbe = 16 << 20
)

// Errors of a body.
var (
	// ErrNoMedia is returned when a body carried no MPEG-TS or FLV program. It wraps
	// stream.ErrNoMedia.
	ErrNoMedia = fmt.Errorf("%w: no MPEG-TS or FLV program found", stream.ErrNoMedia)
)

// format is the container of an HTTP body.
type format uint8

const (
	formatTS format = iota
	formatFLV
)

func (f format) String() string {
	if f == formatFLV {
		return "FLV"
	}
	return "MPEG-TS"
}

// sniff tells the format from the first bytes: FLV starts with "FLV"; anything else is read
// as MPEG-TS, whose demuxer finds the 0x47 sync byte.
func sniff(head []byte) format {
	if bytes.HasPrefix(head, []byte("FLV")) {
		return formatFLV
	}
	return formatTS
}

// ingestBody publishes the MPEG-TS or FLV read from body into s until body ends, and returns
// how many units it published. It fails when the body carries no program it can publish (no
// program at all: ErrNoMedia), when the stream refuses the publisher, or when reading fails.
// The publisher is closed on return.
func ingestBody(body io.Reader, s *stream.Stream, log *slog.Logger) (int64, error) {
	br := bufio.NewReaderSize(body, readChunk)
	head, err := br.Peek(3)
	if len(head) == 0 && err != nil {
		if errors.Is(err, io.EOF) {
			return 0, ErrNoMedia
		}
		return 0, err
	}
	in := ingest.NewPublisher(s, log)
	defer in.Close()
	format := sniff(head)
	log.Debug("body", "format", format)
	if format == formatFLV {
		err = ingestFLV(br, in, log)
	} else {
		err = ingestTS(br, in)
	}
	if err == nil && in.Units() == 0 {
		err = ErrNoMedia
	}
	return in.Units(), err
}

// ingestTS feeds the body to a push demuxer.
func ingestTS(r io.Reader, in *ingest.Publisher) error {
	feed := ingest.NewTSFeed(in)
	defer feed.Finish()
	buf := make([]byte, readChunk)
	probed := 0
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if _, err := feed.Write(buf[:n]); err != nil {
				return err
			}
			if !in.Publishing() {
				if probed += n; probed > maxProbe {
					return fmt.Errorf("%d bytes without a program: %w", probed, ErrNoMedia)
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// ingestFLV reads FLV tags through a Depacketizer; a codec change starts a new session.
func ingestFLV(r io.Reader, in *ingest.Publisher, log *slog.Logger) error {
	fr, err := flv.NewFileReader(r)
	if err != nil {
		return err
	}
	dep := flv.NewDepacketizer()
	dep.Expect(fr.HasVideo, fr.HasAudio)
	probed := 0
	var tagErrs int64
	for {
		tag, err := fr.ReadTag()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := dep.Push(tag); err != nil {
			if !errors.Is(err, flv.ErrCodecChanged) {
				if tagErrs++; tagErrs == 1 {
					log.Warn("skipping FLV tags", "error", err)
				}
				continue
			}
			log.Info("codec changed: new session", "error", err)
			in.Close()
			dep = flv.NewDepacketizer()
			dep.Expect(fr.HasVideo, fr.HasAudio)
			_ = dep.Push(tag)
		}
		if !in.Publishing() {
			tracks := dep.Tracks()
			if tracks == nil {
				if probed += len(tag.Body); probed > maxProbe {
					return fmt.Errorf("%d bytes of FLV without a track: %w", probed, ErrNoMedia)
				}
				continue
			}
			if err := in.SetTracks(tracks); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		}
		for au := dep.Next(); au != nil; au = dep.Next() {
			if err := in.Write(au); err != nil {
				return fmt.Errorf("publish: %w", err)
			}
		}
	}
}
