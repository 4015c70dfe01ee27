package app

import (
	"github.com/sluicemedia/sluice/internal/events"
	"github.com/sluicemedia/sluice/protocols/rtmp"
	"github.com/sluicemedia/sluice/protocols/srt"
)

// localPublisher is the remote address of a publisher in this process (an
// OUTPUT_TYPE_LOCAL_RTMP_URL restream), as getActiveStreams shows it.
const localPublisher = "local"

// publisherEvents turns a server module's publisher sessions, told by its protocol stack as
// they start and end, into publisher_connected and publisher_disconnected events with the
// stream id and the remote address.
type publisherEvents struct {
	a    about
	emit emitter
}

var (
	_ srt.Publishers  = publisherEvents{}
	_ rtmp.Publishers = publisherEvents{}
)

// PublisherConnected implements srt.Publishers and rtmp.Publishers.
func (p publisherEvents) PublisherConnected(streamID, remoteAddr string) {
	p.send(events.PublisherConnected, streamID, remoteAddr)
}

// PublisherDisconnected implements srt.Publishers and rtmp.Publishers.
func (p publisherEvents) PublisherDisconnected(streamID, remoteAddr string) {
	p.send(events.PublisherDisconnected, streamID, remoteAddr)
}

func (p publisherEvents) send(typ, streamID, remoteAddr string) {
	p.emit.emit(p.a.event(typ, map[string]any{"stream_id": streamID, "remote_address": remoteAddr}))
}
