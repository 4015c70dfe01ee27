// Package rtsp carries live streams over RTSP (RFC 2326) with RTP: a listen input that accepts
// one ANNOUNCE/RECORD publisher at a time and serves the same stream to DESCRIBE/SETUP/PLAY
// readers ([Server]), a pull input ([Pull]) and a push output ([Push]). The protocol machinery
// is gortsplib's; this package turns RTP into normalised access units and back.
//
// # Ingest
//
// RTP packets become access units per codec: H.264 (RFC 6184) and H.265 (RFC 7798) NAL units,
// AAC (RFC 3640, mpeg4-generic), MP3 (RFC 2250, MPA) and Opus (RFC 7587). What comes out is
// normalised once, as every input of sluice does:
//
//   - Timestamps: RTP timestamps are unwrapped to 64 bits and counted from the first packet of
//     the session. A track that starts later is placed by the wall-clock time since the
//     leading track's last packet, the way RTSP receivers usually align tracks. Video stays at
//     90 kHz; audio is rescaled to its sample rate (MP3's RTP clock is 90 kHz).
//   - DTS: RTP carries only presentation times. Video DTS is rebuilt from the picture order
//     (mediacommon's DTS extractors), equal to PTS for streams without B-frames; audio DTS is
//     PTS. Steps back and resets are repaired by the stream's publisher, the one timestamp
//     policy of every input (internal/stream/normalize.go).
//   - Video: access unit delimiters are dropped; parameter sets come from the SDP
//     (sprop-parameter-sets, sprop-vps/sps/pps) or in band, are kept in [media.Track.Params]
//     and are put in front of every key frame that lacks them; units before the first key
//     frame are dropped.
//   - Tracks are announced to the Stream once each one's parameters are known (video parameter
//     sets, the MP3 frame header) or once a short probe ran out; until then units wait in a
//     bounded queue. Formats this package does not carry are left out.
//
// # Transports
//
// The Server takes RTP interleaved in the RTSP connection (TCP) and, unless disabled, over UDP
// on one pair of ports for all sessions (RTP on an even port, RTCP on the next), chosen from the
// system's ephemeral range unless configured. Pull uses UDP and falls back to TCP when UDP does
// not work, unless the URL asks for one with ?rtsp_transport=tcp|udp. Push always uses TCP.
package rtsp
