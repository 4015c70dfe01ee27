package stream

import "context"

// Sink consumes a Stream through a Reader: a packager, a restream output, a recorder. Run
// reads until ctx ends or r fails; the caller owns r and closes it after Run returns.
type Sink interface {
	Run(ctx context.Context, r *Reader) error
}
