// Package ingest publishes the media of an input into a stream.Stream. It holds what the
// MPEG-TS inputs share: the Publisher, which attaches a publisher session once the tracks are
// known, the TSFeed that demuxes pushed MPEG-TS bytes into a Publisher, and RunPipe, which
// publishes the MPEG-TS ffmpeg writes to a pipe; and the Merger of the HLS and DASH pulls'
// renditions. Timestamps and the key-frame gate are the stream publisher's (one normaliser for
// every input, internal/stream/normalize.go).
package ingest
