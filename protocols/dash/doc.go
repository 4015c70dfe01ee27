// Package dash is the INPUT_TYPE_MPEG_DASH_URL input: a live MPEG-DASH client that publishes
// a remote presentation into a stream.Stream (see [Pull]).
//
// The MPD is read with github.com/Eyevinn/dash-mpd, after the standard library's XML decoder
// has checked it and written it back plainly (see normalize): dash-mpd's own decoder loops for
// ever on a '>' in character data and on some malformed documents. Segments are addressed by SegmentTemplate,
// with $Number$ or $Time$ (and $RepresentationID$, $Bandwidth$, width formats such as %05d),
// either through a SegmentTimeline or by @duration from availabilityStartTime; SegmentBase and
// SegmentList are not supported, nor content protection; an MPD of nothing playable fails
// with what was left out and why. In each period the video
// representation with the highest bandwidth plays, with one audio representation (of the
// first audio adaptation set with role main, else the first; its highest bandwidth).
//
// A dynamic MPD is reloaded every minimumUpdatePeriod, and sooner when a representation runs
// out of announced segments or a segment is late (at most every 500 ms), from its Location
// when it has one, else from where a permanent redirect sent it. A dynamic MPD's times are on
// the origin's clock: its UTCTiming (http-xsdate, http-iso, http-head, direct) gives how far
// that is from this server's, measured at the start and again every 10 minutes (see clock);
// without one, this server's clock is taken. A dynamic MPD addressed by the wall clock whose
// availabilityStartTime is further ahead than the stall limit fails at once. Playback starts at
// the live edge minus suggestedPresentationDelay (at least minBufferTime and two segments):
// the edge is the end of the SegmentTimeline when there is one, else the origin's clock against
// availabilityStartTime. A segment that keeps answering 404 or 410 is skipped after a few tries
// (livepull.Missing), its hole kept in the timestamps. A static MPD plays once from its start.
// Periods play in order, each on the presentation timeline (its start minus
// presentationTimeOffset), so timestamps continue across them. The pull ends when the
// presentation does (a dynamic MPD turned static), and fails when no new segment comes for
// three segment durations.
//
// Init and media segments are fragmented MP4, read by packager/fmp4 (the reader the HLS pull
// uses too): samples cut out of the segment (every offset checked) from the moof's tfhd/trun
// (or the init's trex defaults), timed by tfdt, sample durations and composition offsets. avcC
// and hvcC give the parameter sets, esds the AAC AudioSpecificConfig; NAL units come
// length-prefixed (4 bytes). Units are normalised on the way
// in: AUDs dropped, parameter sets in front of every key frame, video from a key frame.
//
// The two representations are fetched by one goroutine each; their units are interleaved by
// time and paced to the wall clock, so the stream receives them as from a live encoder, with
// timestamps rebased to 0 at the first video key frame.
//
// No dash-mpd type appears in this package's API.
package dash
