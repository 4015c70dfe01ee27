package app

import (
	"github.com/sluicemedia/sluice/protocols/rtsp"
	"github.com/sluicemedia/sluice/protocols/srt"
	"github.com/sluicemedia/sluice/protocols/udp"
)

// urlChecks check the options of stream addresses at create and update (api.Config.URLChecks):
// an SRT address with an option the stack does not know, or a UDP, RTP or RTSP address with a
// bad value of one it reads, is refused there, naming it, rather than failing at each start.
var urlChecks = map[string]func(string, bool) error{
	"srt": checkSRTURL,
	"udp": pullOnly(udp.CheckURL), "rtp": pullOnly(udp.CheckURL),
	"rtsp": pullOnly(rtsp.CheckURL), "rtsps": pullOnly(rtsp.CheckURL),
}

// checkSRTURL parses an SRT address as the input or output that uses it will.
func checkSRTURL(raw string, listen bool) error {
	var err error
	if listen {
		_, err = srt.ParseListenURL(raw)
	} else {
		_, err = srt.ParseURL(raw)
	}
	return err
}

// pullOnly applies check to the addresses of pull inputs and outputs: a UDP or RTSP listen
// input binds its port and does not read its address.
func pullOnly(check func(string) error) func(string, bool) error {
	return func(raw string, listen bool) error {
		if listen {
			return nil
		}
		return check(raw)
	}
}
