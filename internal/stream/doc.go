// Package stream is the packet bus between sources and sinks.
//
// A [Stream] is a named live stream. One [Publisher] at a time writes access units into it;
// any number of [Reader]s read them. The Stream outlives its publishers: when one goes away
// readers stay open and wait, and when the next one arrives each reader sees a discontinuity.
//
// Fan-out copies nothing: every reader receives the same *media.AccessUnit, which is
// read-only from the moment it is written. The writer never blocks on a reader and allocates
// nothing per unit: each reader has a bounded ring of unit pointers and a one-slot wake
// channel. The ring is bounded twice: by units ([Options.QueueSize]) and by the payload bytes
// it keeps alive ([Options.QueueBytes]). A reader that falls behind either bound drops units
// (counted by [Reader.Stats], by budget), then skips to the next video key frame once its queue
// is half empty again by both; one that stays behind (its queue more than half full after a
// drop) for longer than [Options.LagLimit] is closed with [ErrReaderTooSlow]. A unit larger
// than [Options.MaxUnitBytes] is refused at the write.
//
// A new reader starts at the latest video key frame: the Stream keeps the current GOP and
// pre-fills the reader's ring with it, as long as it fits a queue (units and bytes). Without
// video it starts with the last few units.
//
// # Discontinuities
//
// The first unit a reader receives from a new publisher session has
// [media.AccessUnit.Discontinuity] set. The flag is per reader, so the shared unit is never
// modified: the Reader returns a shallow copy of that one unit with the flag set (the payload
// is shared). This costs one small allocation per reader per reconnect, on the read side, and
// keeps a single field for sinks to look at. A reader that drops the first units of a session
// gets the flag on the first unit it does receive; a reader whose first unit starts a session
// (it joined while the stream had no publisher) gets no flag. Publishers leave the field false.
//
// # Tracks
//
// A publisher calls [Publisher.SetTracks] before its first write. Readers look at
// [Stream.Tracks], or [Stream.WatchTracks] to be told of changes; a unit with Discontinuity
// set is the natural point to look again.
package stream
