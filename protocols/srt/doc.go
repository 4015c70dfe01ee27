// Package srt carries live MPEG-TS over SRT (Secure Reliable Transport) on top of gosrt.
//
// It provides the SRT server module ([Server]: publishers and receivers addressed by stream
// id, see [ParseStreamID]), the SRT listen input ([Listener]: one publisher at a time into one
// Stream), the SRT caller input ([Pull]) and the SRT restream output ([Send]). Media goes in
// through the MPEG-TS demuxer, normalised once (DTS present and monotonic per track), and out
// through the MPEG-TS muxer in 7×188-byte SRT payloads.
//
// SRT URLs take libsrt's query keys: streamid, latency (milliseconds, like srt-live-transmit;
// ffmpeg's -latency option takes microseconds instead), passphrase, pbkeylen, maxbw,
// peeridletimeo, conntimeo and mode (caller, the default, or listener). See [ParseURL].
//
// # Server decisions
//
// A publisher is refused at the handshake when its stream id does not parse, names another
// server, has the wrong (or no, or an unexpected) passphrase, or names a stream that already
// has a publisher; the publisher there goes on. A plain stream id ("cam1") publishes. A
// receiver is refused unless the stream has a publisher now; it starts at the stream's latest
// key frame. Streams stay in the Registry after their publisher leaves, so readers wait for
// the next one. A publisher that announces no tracks within 15 s, or sends no media for 10 s
// while its connection stays up, is dropped.
//
// gosrt's sender ignores its MaxBW setting, so the maxbw option is enforced here by pacing
// writes. gosrt v0.10.0 leaves one goroutine (now and then two) blocked for ever per refused
// Dial: its handshake timer, and its socket reader; a caller refused again and again, retried
// with backoff, leaks at that rate. Closing a connection we dialed drains gosrt's socket reader
// (see closeDialed), so a dial that succeeded leaks nothing.
//
// No gosrt type appears in this package's API.
package srt
