// Package hls is the INPUT_TYPE_HLS_URL input: a live HLS client that publishes a remote
// playlist into a stream.Stream (see [Pull]).
//
// Playlists are parsed by github.com/bluenviron/gohlslib/v2's playlist package. A
// multivariant playlist plays its variant with the highest BANDWIDTH among those whose CODECS
// are all carried (H.264, H.265, AAC, MP3, Opus; a variant without CODECS is tried), the first
// on a tie, as gohlslib's client chooses; when the variant's audio comes from a rendition
// playlist (EXT-X-MEDIA with a URI: the group's DEFAULT one, else its AUTOSELECT one, else its
// first), that playlist is followed too. A live playlist plays from three segments before its
// end, a VOD one (EXT-X-PLAYLIST-TYPE:VOD) from its start. The playlist is reloaded half a
// target duration after it last brought nothing new (RFC 8216 6.3.4); the pull fails when no
// new segment appeared for three target durations, and ends at EXT-X-ENDLIST. A reload that
// lists nothing, or only segments before the last playlist's first (the origin restarted its
// media sequence), does not end the pull: playback starts again from the new live edge, after
// a discontinuity. URIs resolve against the URL a playlist came from after redirects; reloads
// ask where a permanent redirect (301, 308) sent the playlist, and the URL asked before after a
// temporary one. A segment that keeps answering 404 or 410 is skipped after a few tries
// (livepull.Missing), its hole kept in the timestamps (the next read by a new TS demuxer). A
// byte-order mark before #EXTM3U is dropped, and so is EXT-X-PROGRAM-DATE-TIME (not read; the
// parser refuses one without a time zone). Parts and preload hints of a low-latency playlist
// are not fetched: its whole segments play.
//
// gohlslib's own Client is not used: v2.2.0 is built against mediacommon v2.2.0, and with the
// mediacommon v2.4.2 this module pins, its MPEG-TS reader fails at the end of every segment
// (mediacommon now reports astits' end of packets as io.EOF, which gohlslib treats as fatal).
// It also gives up as soon as a reload lacks the next segment, which a live encoder running a
// little late triggers, and has no bound on a segment's size.
//
// MPEG-TS segments go through one packager/mpegts Demuxer per playlist, so timestamps stay
// continuous across segments; after EXT-X-DISCONTINUITY a new Demuxer starts and the timeline
// continues one frame after the last unit. fMP4 segments (EXT-X-MAP) are read with
// packager/fmp4's reader (the one the DASH pull uses). Units are normalised on the way in: AUDs dropped, parameter sets
// learned from the init segment or in-band and put in front of every key frame, video from a
// key frame, one unit per audio frame.
//
// Each playlist is followed by its own goroutine, which downloads a segment whole (at most 64
// MiB, 15 s per request; failed requests are retried while the stream is not stalled) and
// hands its units to the merger. The merger interleaves the playlists' units by time and paces
// them to the wall clock, so the Stream receives them as from a live encoder; timestamps are
// rebased to 0 at the first video key frame. At most 2048 units per playlist wait ahead of the
// pacing. Encrypted segments (EXT-X-KEY with any METHOD but NONE) are refused, naming the
// method; byte ranges are followed; each segment is read against the EXT-X-MAP above it (the
// parser keeps only a playlist's last one).
//
// No gohlslib or mediacommon type appears in this package's API.
package hls
