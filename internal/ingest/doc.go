// Package ingest publishes the media of an input into a stream.Stream, normalised once for
// every reader: DTS present and monotonic per track, a new publisher session when the source's
// timestamps jump, video starting at a key frame. It holds what the MPEG-TS inputs share: the
// Publisher, the Timeline it repairs timestamps with, the TSFeed that demuxes pushed MPEG-TS
// bytes into a Publisher, and RunPipe, which publishes the MPEG-TS ffmpeg writes to a pipe.
package ingest
