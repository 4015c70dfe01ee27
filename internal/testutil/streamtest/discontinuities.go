package streamtest

import (
	"context"

	"github.com/sluicemedia/sluice/internal/stream"
)

// CountDiscontinuities reads r in the background and counts the units that mark a
// discontinuity (a new publisher session), until stop is called or r fails; stop returns the
// count. Call stop once.
func CountDiscontinuities(r *stream.Reader) (stop func() int) {
	ctx, cancel := context.WithCancel(context.Background())
	discs := make(chan int, 1)
	go func() {
		n := 0
		for {
			au, err := r.Read(ctx)
			if err != nil {
				discs <- n
				return
			}
			if au.Discontinuity {
				n++
			}
		}
	}()
	return func() int {
		cancel()
		return <-discs
	}
}
