package stream

import "errors"

// ErrBusy is returned by Publish when the stream already has a publisher.
var ErrBusy = errors.New("stream is busy: it already has a publisher")

// ErrClosed is returned when the stream, the publisher or the reader was closed.
var ErrClosed = errors.New("closed")

// ErrReaderTooSlow is returned by Read once the reader has been closed for lagging behind the
// stream for longer than Options.LagLimit.
var ErrReaderTooSlow = errors.New("reader too slow")
