// Package transcode decides whether a process needs ffmpeg, maps a transcoding object (spec 2.2)
// to ffmpeg's arguments, probes the hardware encoders the server has, and runs ffmpeg as a
// supervised Job between two Streams.
//
// Media goes into ffmpeg as MPEG-TS on its stdin and comes back as MPEG-TS on its stdout;
// ffmpeg's -progress feed comes over a Unix socket of its own, so that stderr carries only
// error text (quoted when ffmpeg fails). ffmpeg rebases output timestamps: the output Stream
// has a timeline of its own that starts near zero at every start of a Job (a restart is a new
// publisher session, which readers see as a discontinuity). -copyts is not used, since input
// timestamps that wrap or jump would then reach the encoders and muxer.
package transcode
