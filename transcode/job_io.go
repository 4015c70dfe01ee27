package transcode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/sluicemedia/sluice/internal/media"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/mpegts"
)

// idleGap is a pause in the input after which the stall clock starts over: ffmpeg cannot
// progress without input, so time without any is not a stall.
const idleGap = time.Second

// feed muxes the input's units into MPEG-TS on w, first included. The Remuxer keeps the
// timestamps increasing across the input's discontinuities, so that ffmpeg never sees time
// go back. It returns nil when ctx ends, the input stream closes (ffmpeg then finishes at the
// end of its stdin) or a write fails (ffmpeg is gone: its exit says why); an error wrapping
// ErrInputChanged when a new publisher brought other tracks.
func (j *Job) feed(ctx context.Context, rd *stream.Reader, rmx *mpegts.Remuxer, first *media.AccessUnit, w io.Writer) error {
	var changed []media.Track
	rmx.OnTracks = func(t []media.Track) { changed = t }
	var buf []byte
	au := first
	for {
		if au == nil {
			var err error
			if au, err = rd.Read(ctx); err != nil {
				switch {
				case errors.Is(err, io.EOF):
					j.ended.Store(time.Now().UnixNano())
					j.log.Info("input stream closed; ffmpeg finishes")
					return nil
				case ctx.Err() != nil:
					return nil
				}
				return fmt.Errorf("transcode: input: %w", err)
			}
		}
		out, _, ok, err := rmx.AppendAccessUnit(buf[:0], au)
		au = nil
		if changed != nil {
			return fmt.Errorf("transcode: %w: now %s", ErrInputChanged, describe(changed))
		}
		if err != nil {
			return fmt.Errorf("transcode: mux input: %w", err)
		}
		if !ok {
			continue
		}
		buf = out
		now := time.Now()
		if now.UnixNano()-j.lastFed.Load() > int64(idleGap) {
			j.restartStallClock(now)
		}
		j.lastFed.Store(now.UnixNano())
		j.writing.Store(true)
		_, err = w.Write(buf)
		j.writing.Store(false)
		j.lastFed.Store(time.Now().UnixNano())
		if err != nil {
			j.log.Debug("write to ffmpeg", "error", err)
			return nil
		}
	}
}

// publish demuxes ffmpeg's output and publishes it into the output Stream, one session. It
// returns nil at the end of ffmpeg's output.
func (j *Job) publish(r io.Reader) error {
	d := mpegts.NewDemuxer(r)
	tracks, err := d.Tracks()
	if err != nil {
		if endOfOutput(err) {
			return nil
		}
		return fmt.Errorf("transcode: ffmpeg output: %w", err)
	}
	pub, err := j.cfg.Output.Publish()
	if err != nil {
		return fmt.Errorf("transcode: output: %w", err)
	}
	defer pub.Close()
	if err := pub.SetTracks(tracks); err != nil {
		return fmt.Errorf("transcode: output: %w", err)
	}
	j.log.Info("output tracks", "tracks", describe(tracks))
	for {
		au, err := d.Read()
		if err != nil {
			if endOfOutput(err) {
				return nil
			}
			return fmt.Errorf("transcode: ffmpeg output: %w", err)
		}
		if err := pub.Write(au); err != nil {
			return fmt.Errorf("transcode: output: %w", err)
		}
	}
}

func endOfOutput(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) }

// describe writes tracks for messages: "H264 1280x720, AAC 48000 Hz".
func describe(tracks []media.Track) string {
	if len(tracks) == 0 {
		return "no tracks"
	}
	s := make([]string, len(tracks))
	for i, t := range tracks {
		if t.Codec.IsVideo() {
			s[i] = fmt.Sprintf("%s %dx%d", t.Codec, t.Params.Width, t.Params.Height)
		} else {
			s[i] = fmt.Sprintf("%s %d Hz", t.Codec, t.Params.SampleRate)
		}
	}
	return strings.Join(s, ", ")
}
