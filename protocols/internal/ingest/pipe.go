package ingest

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sluicemedia/sluice/internal/stream"
	"github.com/sluicemedia/sluice/internal/supervisor"
)

// ErrNoMedia is returned by RunPipe when ffmpeg ended without producing anything to publish.
// It wraps stream.ErrNoMedia.
var ErrNoMedia = fmt.Errorf("%w: ffmpeg produced nothing", stream.ErrNoMedia)

// RunPipe runs ffmpeg, whose arguments write MPEG-TS to its stdout, under supervisor.Command
// (own process group, killed with the server, SIGINT then SIGKILL on stop; SIGKILL at once
// with kill, for an ffmpeg that reads nothing from outside, like the test video) and publishes
// its output into s. It returns nil when ctx ends, or when ffmpeg exits with status 0 after media
// flowed; an error when ffmpeg fails, produced nothing (ErrNoMedia), or its output cannot be
// published. redact, when not nil, rewrites ffmpeg's arguments and stderr lines before they are
// logged or quoted (supervisor.Command.Redact): an input address may hold a secret.
func RunPipe(ctx context.Context, ffmpegPath string, args []string, s *stream.Stream, log *slog.Logger, kill bool, redact func(string) string) error {
	child, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	feed := NewTSFeed(NewPublisher(s, log))
	out := &pipeOut{feed: feed, fail: cancel}
	cmd := supervisor.Command{Path: ffmpegPath, Args: args, Stdout: out, Logger: log, KillOnStop: kill, Redact: redact}
	err := cmd.Run(child)
	feed.Finish() // Run returned: nothing writes to out any more
	switch {
	case ctx.Err() != nil:
		return nil
	case out.err != nil:
		return fmt.Errorf("ffmpeg output: %w", out.err)
	case err != nil:
		return err
	case feed.Units() == 0:
		return ErrNoMedia
	}
	return nil
}

// pipeOut is ffmpeg's stdout: it feeds the demuxer. After a fatal error it stops the child
// and discards the rest. Only the goroutine copying the pipe writes to it.
type pipeOut struct {
	feed *TSFeed
	fail context.CancelCauseFunc
	err  error
}

func (o *pipeOut) Write(p []byte) (int, error) {
	if o.err != nil {
		return len(p), nil
	}
	if _, err := o.feed.Write(p); err != nil {
		o.err = err
		o.fail(err)
		return len(p), nil
	}
	return len(p), nil
}
