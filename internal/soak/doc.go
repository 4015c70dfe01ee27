// Package soak is the endurance test of `make soak`: it starts bin/sluice, drives publisher
// connect/drop cycles over SRT, RTMP and UDP into processes with players, restreams and
// recordings attached, runs create/start/stop/remove cycles of transcoding restreams, and then
// checks that goroutines, open descriptors, child processes and memory are back near their
// baseline and that every recorded file plays.
package soak
