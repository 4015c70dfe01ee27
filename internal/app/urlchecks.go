package app

import (
	"fmt"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/protocols/httpts"
	"github.com/sluicemedia/sluice/protocols/rtmp"
	"github.com/sluicemedia/sluice/protocols/rtsp"
	"github.com/sluicemedia/sluice/protocols/srt"
	"github.com/sluicemedia/sluice/protocols/udp"
)

// urlChecks check the options of stream addresses at create and update (api.Config.URLChecks):
// an SRT address with an option the stack does not know, a UDP, RTP or RTSP address with a bad
// value of one it reads, or an RTMP or HTTP listen input's address with a bad password, is refused
// there, naming it, rather than failing at each start.
var urlChecks = map[string]func(string, bool) error{
	"srt":  checkSRTURL,
	"rtmp": checkRTMPURL, "rtmps": checkRTMPURL,
	"http": checkHTTPURL, "https": checkHTTPURL,
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

// checkRTMPURL checks the password an RTMP listen input's address sets; the query of an RTMP
// pull's or output's address goes to the remote server as written.
func checkRTMPURL(raw string, listen bool) error {
	if !listen {
		return nil
	}
	_, err := rtmpListenPassword(raw)
	return err
}

// rtmpListenPassword is the password an RTMP listen input's address sets, "" for none. A
// password parameter without the form of an RTMP password (kinds.ValidRTMPPassword), empty
// included, is an error that does not show it.
func rtmpListenPassword(raw string) (string, error) {
	return listenPassword(rtmp.ListenPassword, rtmp.PasswordParam, raw)
}

// checkHTTPURL checks the password an HTTP listen input's address sets; the query of an HTTP
// pull's or output's address goes to the remote server as written.
func checkHTTPURL(raw string, listen bool) error {
	if !listen {
		return nil
	}
	_, err := httpListenPassword(raw)
	return err
}

// httpListenPassword is the password an HTTP listen input's address sets, "" for none, held to
// the rule of an RTMP password as rtmpListenPassword does.
func httpListenPassword(raw string) (string, error) {
	return listenPassword(httpts.ListenPassword, httpts.PasswordParam, raw)
}

// listenPassword reads the password a listen input's address sets with read; one given without
// the form of an RTMP password is an error naming param, never showing the password.
func listenPassword(read func(string) (string, bool, error), param, raw string) (string, error) {
	pw, given, err := read(raw)
	switch {
	case err != nil:
		return "", err
	case given && !kinds.ValidRTMPPassword(pw):
		return "", fmt.Errorf("%s must be %s", param, kinds.RTMPPasswordRule)
	}
	return pw, nil
}
