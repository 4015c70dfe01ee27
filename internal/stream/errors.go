package stream

import "errors"

// ErrBusy is returned by Publish when the stream already has a publisher.
var ErrBusy = errors.New("stream is busy: it already has a publisher")

// ErrClosed is returned when the stream, the publisher or the reader was closed.
var ErrClosed = errors.New("closed")

// ErrReaderTooSlow is returned by Read once the reader has been closed for lagging behind the
// stream for longer than Options.LagLimit.
var ErrReaderTooSlow = errors.New("reader too slow")

// ErrNoMedia is wrapped by an input's error when the input ended before it published any
// media: the peer left, the playlist or presentation ended, the body held no program, ffmpeg
// produced nothing. Each protocol's ErrNoMedia wraps it and says how its input ended.
var ErrNoMedia = errors.New("no media")
