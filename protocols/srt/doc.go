// Package srt carries live MPEG-TS over SRT (Secure Reliable Transport), on sluice's own SRT
// live-mode stack (package link, with wire for the packet format and crypt for encryption).
//
// It provides the SRT server module ([Server]: publishers and receivers addressed by stream
// id, see [ParseStreamID]), the SRT listen input ([Listener]: one publisher at a time into one
// Stream), the SRT caller input ([Pull]) and the SRT restream output ([Send]). Media goes in
// through the MPEG-TS demuxer, normalised once (protocols/internal/ingest), and out through the MPEG-TS
// muxer in 7×188-byte SRT payloads.
//
// SRT URLs take libsrt's query keys: streamid, latency (milliseconds, like srt-live-transmit;
// ffmpeg's -latency option takes microseconds instead), passphrase, pbkeylen, maxbw, rcvbuf,
// sndbuf, peeridletimeo, conntimeo, kmrefreshrate, kmpreannounce and mode (caller, the default,
// or listener). Unknown keys are refused. See [ParseURL].
//
// # Server decisions
//
// A caller is refused at the handshake, with the reason libsrt callers print, when its stream
// id does not parse (1400), names another server or a stream with no publisher (1404), names a
// stream that already has a publisher (1409; the publisher there goes on), or has the wrong
// passphrase (10), or none where one is set, or one where none is (11). A plain stream id
// ("cam1") publishes. A receiver gets the publisher's MPEG-TS as it was sent, relayed payload
// for payload (see relay): it starts at the latest random access point, with the PAT and PMT
// first. Streams stay in the Registry after their publisher leaves, so readers wait for the
// next one. A publisher that announces no tracks within 15 s, or sends no media for 10 s while
// its connection stays up, is dropped.
package srt
