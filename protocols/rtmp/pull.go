package rtmp

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicemedia/sluice/internal/redact"
	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/packager/flv"
)

// playBufferMs is the buffer length a player announces.
const playBufferMs = 3000

// Pull is the INPUT_TYPE_RTMP_URL input: it plays o.URL from a remote server and publishes
// into s, one session from Publish to Close. It returns when the remote
// ends the stream (nil if media flowed, an error wrapping ErrNoMedia otherwise), when the
// connection fails (an error), or when ctx ends (nil).
func Pull(ctx context.Context, s *stream.Stream, o PullOptions) error {
	url, log := o.URL, o.Log
	if log == nil {
		log = slog.Default()
	}
	t, err := parseTarget(url, "")
	if err != nil {
		return err
	}
	where := shown(url, "")
	log = log.With("rtmp_pull", where)
	cl, err := dial(ctx, t, log)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("rtmp pull %s: %w", where, hideSecrets(err, url, ""))
	}
	defer cl.c.close()
	stop := watch(ctx, cl.c)
	defer stop()
	err = cl.pull(s, url)
	if ctx.Err() != nil {
		return nil
	}
	if err != nil {
		return fmt.Errorf("rtmp pull %s: %w", where, hideSecrets(err, url, ""))
	}
	return nil
}

// pull plays the stream; url is the address, whose secrets a server's status may quote.
func (cl *client) pull(s *stream.Stream, url string) error {
	if err := cl.connect(); err != nil {
		return err
	}
	id, err := cl.createStream()
	if err != nil {
		return err
	}
	if err := cl.c.writeCommand(csidData, id, "play", 0, nil, cl.t.Name, -2000); err != nil {
		return err
	}
	if err := cl.c.writeUserControl(ucSetBufferLength, id, playBufferMs); err != nil {
		return err
	}
	var in *ingest
	defer func() { in.close() }()
	start := func() error {
		if in != nil {
			return nil
		}
		pub, err := s.Publish()
		if err != nil {
			return err
		}
		in = newIngest(pub, cl.log)
		cl.log.Info("rtmp: pulling")
		return nil
	}
	end := func(why string) error {
		if in.flowed() {
			cl.log.Info("rtmp: remote ended the stream", "reason", redact.Text(why, url, redactOpts("")...))
			return nil
		}
		return fmt.Errorf("%s: %w", why, ErrNoMedia)
	}
	for {
		msg, err := cl.c.readMessage()
		if err != nil {
			if isClosedErr(err) {
				return end("connection closed")
			}
			return err
		}
		switch msg.Type {
		case msgCommandAMF0, msgCommandAMF3:
			cmd, err := parseCommand(msg)
			if err != nil || cmd.Name != "onStatus" {
				continue
			}
			if err := statusError(cmd); err != nil {
				if in.flowed() {
					return end(err.Error())
				}
				return err
			}
			switch _, code, _ := cmd.status(); code {
			case codePlayStart, codePlayReset:
				if err := start(); err != nil {
					return err
				}
			case codePlayStop, codePlayComplete, codePlayUnpublish:
				return end(code)
			}
		case msgUserControl:
			if len(msg.Body) >= 2 && binary.BigEndian.Uint16(msg.Body) == ucStreamEOF && in.flowed() {
				return end("stream EOF")
			}
		case msgDataAMF0, msgDataAMF3:
			if err := start(); err != nil {
				return err
			}
			if vals, _ := amfDecode(amfBody(msg)); len(vals) > 0 {
				in.metadata(vals)
			}
		case msgAudio, msgVideo, msgAggregate:
			if err := start(); err != nil {
				return err
			}
			if msg.Type == msgAggregate {
				err = in.aggregate(msg.Timestamp, msg.Body, time.Now())
			} else {
				err = in.tag(flv.TagType(msg.Type), msg.Timestamp, msg.Body, time.Now())
			}
			if err != nil {
				return err
			}
		}
	}
}
