package stream

import "context"

// Source fills a Stream: a protocol input or a generator. Run publishes into s (Publish,
// SetTracks, Write), closing its publisher when its input drops, and returns when ctx ends or
// the input fails for good.
type Source interface {
	Run(ctx context.Context, s *Stream) error
}
