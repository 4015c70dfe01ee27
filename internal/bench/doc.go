// Package bench is the `make bench` comparison of sluice against ffmpeg: it starts sluice and a
// reference on loopback, feeds both the same pre-encoded stream, samples each side's CPU time and
// memory from /proc, and renders the medians of several runs as a table.
package bench
