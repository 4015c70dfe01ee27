// Package link is sluice's own SRT live-mode stack: listeners and callers over UDP, written
// from the IETF draft "The SRT Protocol" (draft-sharabayko-srt) and libsrt 1.5's documented
// behaviour, interoperating with libsrt (srt-live-transmit, ffmpeg) in both roles. The packet
// format is package wire; payload encryption is package crypt.
//
// # Supported
//
//   - Caller and listener with the HSv5 handshake: induction answered statelessly with a SYN
//     cookie (a keyed hash of the peer's address and the minute), conclusion with the HSREQ/
//     HSRSP extension (TSBPD both ways, too-late packet drop, periodic NAK reports, the KK and
//     R bits), the stream id extension (up to 512 bytes), congestion controller "live", and the
//     key material extensions. A repeated conclusion is answered again. Each direction's
//     latency is the larger of both sides' wishes.
//   - Rendezvous (Rendezvous) with the HSv5 handshake: both sides wave from a known port, the
//     cookie contest (libsrt's 32-bit serial comparison) makes one the initiator, whose
//     conclusion carries HSREQ (KMREQ, stream id) and which ends with the agreement; the
//     responder answers with HSRSP (KMRSP), every repeat of the initiator's conclusion again,
//     and connects on the agreement or on the initiator's first other packet; a connection
//     answers a peer's repeated handshake with the agreement. Only the given peer address takes
//     part. Equal cookies are refused (REJ_RDVCOOKIE); encryption is checked as a listener
//     checks a caller, on both sides, with the initiator's keys both ways and the responder's
//     advertised key length.
//   - Rejections carry libsrt's reasons (Reject: SRT_REJ_* and the access-control SRT_REJX_*
//     codes), sent in the handshake type as libsrt does, so a libsrt caller reports them; a
//     refused Dial returns a *RejectError.
//   - Encryption: AES-CTR with 16, 24 or 32-byte keys from a passphrase, the caller's keys used
//     both ways (HSv5's reverse key exchange), key refresh by packet count in both directions
//     (KMREQ/KMRSP user-defined control packets). As libsrt's enforced encryption, a listener
//     with a passphrase refuses callers without one (REJ_UNSECURE) or whose key material does
//     not open (REJ_BADSECRET), and a listener without one refuses encrypting callers.
//   - Live delivery: one message per packet; receive buffer indexed by sequence number
//     (31 bits, wrapping); loss list with an immediate NAK on a gap and periodic NAKs; full
//     ACKs every 10 ms, light ACKs every 64 packets; ACKACK giving RTT and RTT variance; TSBPD
//     delivery at the negotiated latency with drift tracking (in-order packets are handed over
//     on a grid of min(latency/8, 10 ms), up to one step early, so a reader wakes once a step
//     whatever the sender's spacing); too-late packet drop on both
//     sides; drop requests sent and honoured; duplicates, belated and undecryptable packets
//     counted.
//   - Sending: a send buffer holding only what is unacknowledged, bounded by time (the larger
//     of the latency and 1 s, plus 20 ms, then dropped with a drop request) and by SendBuffer;
//     retransmission on NAK and on ACK timeout; pacing at MaxBW, or at the measured input rate
//     plus 25 % (libsrt's live default); keep-alives after a second of silence; the peer-idle
//     timeout; shutdown both ways.
//   - Statistics per connection (Stats), live.
//
// # Not supported
//
// HSv4 rendezvous peers (Rendezvous returns ErrVersion), a listener answering wave-a-hands (a
// listener ignores them), HSv4 callers (refused with REJ_VERSION, and a shutdown since they
// do not read it), stream/file mode
// (REJ_MESSAGEAPI), the "file" congestion controller (REJ_CONGESTION), packet filters such as
// FEC (REJ_FILTER), socket groups and bonding (REJ_GROUP), AES-GCM, messages spanning several
// packets, and SRT over anything but UDP.
//
// # Design
//
// A socket is a mux: one UDP socket, one read goroutine and one clock goroutine, whatever the
// number of connections on it (a listener's accepted connections share its socket; a caller
// has its own). The read loop reads datagrams in batches with recvmmsg(2), into pooled packet
// buffers, and dispatches them by destination socket id; the buffer a data packet arrived in
// is the one that waits in the receive buffer until Read copies the payload out. On the send
// side a payload lives in a pooled, reference-counted Payload: Write copies the message into
// one, WriteShared queues one the caller made, so that a payload fanned out to many
// connections is held once (an encrypting connection encrypts a copy of its own). A send-buffer
// entry is the connection's own header and a reference to the payload, given back when the
// packet is acknowledged or dropped; each datagram leaves as two pieces, header and payload
// (two iovecs of sendmmsg), first sendings and retransmissions alike. The clock
// keeps a heap of its connections by the time each next needs service (ACK and NAK periods,
// keep-alive, idle timeout, send drops, pacing), with the periodic work of every connection
// on one 10 ms grid, and sends with sendmmsg(2): what several connections write at the same
// moment leaves in one system call, and a connection's run of equal-length datagrams leaves as
// one segmented message (UDP_SEGMENT) where the kernel has it. A writer that fans payloads out
// to many connections (the server module's relay) writes through a Batch and sends the whole
// round itself when it flushes, instead of waking the clock. Nothing runs per connection except the application's own
// Read, which sleeps until the head packet's delivery time. The receive and send paths do not
// allocate per packet (BenchmarkReceivePath, BenchmarkSendPath), and a consumer that stops
// reading never blocks the read loop: its buffer fills to its cap and the rest is dropped
// and counted.
//
// Batched writes use golang.org/x/net's WriteBatch. Batched reads use recvmmsg through the
// socket's raw connection on Linux (x/net's ReadBatch allocates an address for every datagram)
// and one datagram a read elsewhere.
//
// Where this stack departs from libsrt 1.5.1, on purpose: the sender also tells the peer about
// the packets it drops (libsrt does only in answer to a NAK for them); the ACK timeout
// retransmission stays on with peers that send periodic NAK reports (libsrt turns it off),
// since nothing else recovers packets lost at the tail of a paused stream; until the first RTT
// sample the periodic NAK period is 20 ms instead of 150 ms; the periodic NAK period and the
// ACK timeout are at most a quarter of the latency, so that an RTT estimate inflated by a
// stall of either process does not leave a lost packet a single retry; a missing packet is
// given up as too late only once the read loop has caught up with its socket (or a second
// after its successor was due), so that a retransmission a stalled process had not read yet
// is delivered; and a backlogged sender's catch-up on its pacing schedule is capped at 100 ms.
package link
