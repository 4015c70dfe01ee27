package api

import (
	"regexp"
	"strings"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// rtmpPasswordKeys are an RTMP server module's write-only fields and the read flags that stand
// for them.
var rtmpPasswordKeys = []string{"server_publish_password", "server_publish_password_set",
	"server_play_password", "server_play_password_set"}

// validateSRTServer reads an SRT server module record (API.md "Modules the spec relies on").
func validateSRTServer(f *fields) *storage.SRTServer {
	var s storage.SRTServer
	s.Active = f.boolean("active", true)
	s.ServerName = serverName(f)
	s.ServerPort, _ = f.intIn("server_port", true, 1, 65535)
	s.ServerLatency = f.intDefault("server_latency", 20, 10000, 200)
	s.ServerPassphrase, _ = f.str("server_passphrase", false)
	if n := len([]rune(s.ServerPassphrase)); s.ServerPassphrase != "" && (n < 10 || n > 79) {
		f.fail("server_passphrase", "must be 10 to 79 characters")
	}
	if k, ok := f.intIn("server_pbkeylen", false, 0, 32); ok {
		if k != 16 && k != 24 && k != 32 {
			f.fail("server_pbkeylen", "must be 16, 24 or 32")
		}
		s.ServerPbkeylen = k
	} else if s.ServerPassphrase != "" {
		s.ServerPbkeylen = 16
	}
	s.ServerMaxbw = -1
	if bw, ok := f.integer("server_maxbw", false, -1, 1<<53); ok {
		s.ServerMaxbw = bw
	}
	s.ServerTimeout, _ = f.intIn("server_timeout", false, 1, 3600)
	s.PublisherPrefix = streamPrefix(f, "publisher_prefix", "publisher")
	s.ReceiverPrefix = streamPrefix(f, "receiver_prefix", "receiver")
	if s.PublisherPrefix == s.ReceiverPrefix && f.ok() {
		f.fail("receiver_prefix", "must differ from publisher_prefix")
	}
	f.used["server_passphrase_set"] = true
	f.done()
	return &s
}

// validateRTMPServer reads an RTMP server module record.
func validateRTMPServer(f *fields) *storage.RTMPServer {
	var s storage.RTMPServer
	s.Active = f.boolean("active", true)
	s.ServerName = serverName(f)
	s.ServerPort, _ = f.intIn("server_port", true, 1, 65535)
	s.ServerPublishPassword = rtmpPassword(f, "server_publish_password")
	s.ServerPlayPassword = rtmpPassword(f, "server_play_password")
	f.skip("server_publish_password_set", "server_play_password_set")
	f.done()
	return &s
}

// rtmpPassword reads an RTMP server module's password; empty is none.
func rtmpPassword(f *fields, key string) string {
	s, ok := f.str(key, false)
	if !ok || s == "" {
		return ""
	}
	if !kinds.ValidRTMPPassword(s) {
		f.fail(key, "must be %s", kinds.RTMPPasswordRule)
		return ""
	}
	return s
}

// serverName is a module name; it becomes a path segment of stream ids (the server slug), so
// '/', '#', ',' and '=' are refused.
func serverName(f *fields) string {
	n := f.name("server_name")
	if strings.ContainsAny(n, "/#,=?") {
		f.fail("server_name", "must not contain / # , = or ?")
		return ""
	}
	return n
}

func streamPrefix(f *fields, key, def string) string {
	s, ok := f.str(key, false)
	if !ok || s == "" {
		return def
	}
	if !prefixPattern.MatchString(s) {
		f.fail(key, "must be 1 to 32 of A-Z a-z 0-9 _ -")
		return def
	}
	return s
}
