package testutil

import "github.com/sluicemedia/sluice/internal/tooling"

// SyncBuffer is a bytes.Buffer safe for concurrent use: a log sink the code under test writes
// while the test reads it. Max, when above zero, caps what it keeps (in bytes); the zero value
// keeps everything. It is tooling's buffer, the one the bench and the soak keep their
// children's output in.
type SyncBuffer = tooling.SyncBuffer
