// Package compat is the player compatibility suite (issue 19): recordings of every format
// made from a real publish that drops in the middle of a frame, and live HLS and DASH, checked
// with the players and tools people open them with: ffprobe and ffmpeg, MediaInfo, GStreamer
// (gst-discoverer-1.0, gst-launch-1.0 playbin, gst-play-1.0 with a seek) and VLC (headless,
// as an unprivileged user). The package holds only tests; `make test` installs the tools
// (scripts/ensure-test-deps.sh), and under CI a missing tool fails the suite.
package compat
