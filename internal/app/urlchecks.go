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
// value of one it reads, or an RTMP, RTSP or HTTP listen input's address with bad credentials,
// is refused there, naming it, rather than failing at each start.
var urlChecks = map[string]func(string, bool) error{
	"srt":  checkSRTURL,
	"rtmp": listenOnly(rtmpListenPassword), "rtmps": listenOnly(rtmpListenPassword),
	"http": listenOnly(httpListenPassword), "https": listenOnly(httpListenPassword),
	"udp": pullOnly(udp.CheckURL), "rtp": pullOnly(udp.CheckURL),
	"rtsp": checkRTSPURL, "rtsps": checkRTSPURL,
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

// pullOnly applies check to the addresses of pull inputs and outputs: a UDP listen input binds
// its port and does not read its address.
func pullOnly(check func(string) error) func(string, bool) error {
	return func(raw string, listen bool) error {
		if listen {
			return nil
		}
		return check(raw)
	}
}

// listenOnly checks with read the address of a listen input (the password it sets); the
// address of a pull or an output goes to the remote server as written.
func listenOnly(read func(string) (string, error)) func(string, bool) error {
	return func(raw string, listen bool) error {
		if !listen {
			return nil
		}
		_, err := read(raw)
		return err
	}
}

// rtmpListenPassword is the password an RTMP listen input's address sets, "" for none. A
// password parameter without the form of an RTMP password (kinds.ValidRTMPPassword), empty
// included, is an error that does not show it.
func rtmpListenPassword(raw string) (string, error) {
	return listenPassword(rtmp.ListenPassword, rtmp.PasswordParam, raw)
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

// checkRTSPURL checks the options of an RTSP pull's or output's address (its user information
// goes to the remote server as written), or the credentials an RTSP listen input's address
// sets (its other options are not read).
func checkRTSPURL(raw string, listen bool) error {
	if !listen {
		return rtsp.CheckURL(raw)
	}
	_, _, err := rtspListenCredentials(raw)
	return err
}

// rtspListenCredentials are the credentials an RTSP listen input's address sets, both "" for
// none. A user name without the form kinds.ValidListenUser, or a password without the form of
// an RTMP password, is an error that does not show them; so is one given without the other.
func rtspListenCredentials(raw string) (user, password string, err error) {
	user, password, err = rtsp.ListenCredentials(raw)
	switch {
	case err != nil:
		return "", "", err
	case user == "" && password == "":
		return "", "", nil
	case !kinds.ValidListenUser(user):
		return "", "", fmt.Errorf("the user name of its credentials (user:password@) must be %s", kinds.ListenUserRule)
	case !kinds.ValidRTMPPassword(password):
		return "", "", fmt.Errorf("the password of its credentials (user:password@) must be %s", kinds.RTMPPasswordRule)
	}
	return user, password, nil
}
