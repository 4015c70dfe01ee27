package httpts

import "io"

// idleReader calls arm before every read: arm (re)starts a timer or a read deadline, so that
// a peer that stops sending mid-body fails the read instead of holding the input.
type idleReader struct {
	r   io.Reader
	arm func()
}

func (ir idleReader) Read(p []byte) (int, error) {
	ir.arm()
	return ir.r.Read(p)
}
