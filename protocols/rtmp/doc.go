// Package rtmp is sluice's RTMP: a server that encoders publish to and players play from
// (rtmp://host:port/live/<key>), a single-publisher listen input, a pull input that plays a
// remote URL, and a push output that publishes to a remote server.
//
// Media goes through packager/flv: legacy FLV tags for H.264, AAC and MP3, enhanced RTMP
// ('hvc1') for H.265. Published streams are normalised at ingest by the flv Depacketizer and
// the stream Publisher; each player or push has its own flv Packetizer, so the only copy of
// a payload per reader is the tag it builds, which is written to the socket with a vectored
// write.
//
// The handshake comes from github.com/yutopp/go-rtmp. Chunking, AMF0 and the command flow
// are this package's own: go-rtmp v0.0.7 decodes commands with go-amf0, whose strict-array
// decoder allocates whatever length a peer claims (five bytes bring a process down with
// "out of memory"), its client cannot receive media on a created stream, and its chunk
// reader loses sync on extended timestamps in type 3 chunks after 4.66 hours. Here every
// length a peer sends is checked against a bound (maxMessageSize, maxChunkStreams), and memory
// follows the bytes received, not the lengths declared: a message buffer grows as its payload
// arrives, and the bytes a connection holds in partly assembled messages are capped
// (maxPendingBytes). A server connection must publish or play within SetupTimeout, and the
// listener caps connections in total and per client address (internal/connlimit).
package rtmp
