package link

import "fmt"

// Reject is a connection rejection reason, numbered as libsrt numbers them (rejection-codes.md):
// 1..17 are SRT's own (SRT_REJ_*), 1000..1999 the access-control codes applications use
// (SRT_REJX_*, most of them HTTP codes plus 1000), 2000 and up free for applications. On the
// wire the reason travels as handshake type 1000+reason. Zero accepts.
type Reject uint32

// SRT's own rejection reasons (SRT_REJ_*).
const (
	RejectNone       Reject = 0  // accept (SRT_REJ_UNKNOWN)
	RejectSystem     Reject = 1  // a system function failed
	RejectPeer       Reject = 2  // rejected by the peer, no details
	RejectResource   Reject = 3  // resource allocation problem (here: MaxConns reached)
	RejectRogue      Reject = 4  // the handshake could not be interpreted
	RejectBacklog    Reject = 5  // the listener's accept queue is full
	RejectIPE        Reject = 6  // internal program error
	RejectClose      Reject = 7  // the listener is closing
	RejectVersion    Reject = 8  // handshake or SRT version not supported (HSv4 callers)
	RejectRdvCookie  Reject = 9  // rendezvous cookie collision
	RejectBadSecret  Reject = 10 // both sides have a passphrase and they differ
	RejectUnsecure   Reject = 11 // only one side has a passphrase
	RejectMessageAPI Reject = 12 // message API (live) versus stream API (file)
	RejectCongestion Reject = 13 // congestion controller other than "live"
	RejectFilter     Reject = 14 // packet filter asked for
	RejectGroup      Reject = 15 // socket group asked for
	RejectTimeout    Reject = 16 // not rejected, timed out
	RejectCrypto     Reject = 17 // unsupported or mismatching encryption mode
)

// Access-control rejection reasons (SRT_REJX_*, access-control.md) a Listen decide function
// returns.
const (
	RejectXFallback       Reject = 1000 // the callback interrupted the connection
	RejectXKeyNotSup      Reject = 1001 // a stream id key is not supported
	RejectXFilePath       Reject = 1002 // the resource path has the wrong syntax or is absent
	RejectXHostNotFound   Reject = 1003 // the h= host is unknown
	RejectXBadRequest     Reject = 1400 // general syntax error (a stream id that does not parse)
	RejectXUnauthorized   Reject = 1401 // authentication failed
	RejectXOverload       Reject = 1402 // server overloaded or credit exceeded
	RejectXForbidden      Reject = 1403 // access denied
	RejectXNotFound       Reject = 1404 // no such resource (stream)
	RejectXBadMode        Reject = 1405 // the m= mode is not supported for this resource
	RejectXUnacceptable   Reject = 1406 // parameters not available
	RejectXConflict       Reject = 1409 // the resource is locked for modification (already published)
	RejectXNotSupMedia    Reject = 1415 // media type not supported
	RejectXLocked         Reject = 1423 // the resource is locked against any access
	RejectXFailedDepend   Reject = 1424 // a dependent entity is absent
	RejectXISE            Reject = 1500 // internal server error
	RejectXUnimplemented  Reject = 1501 // not supported by this version of the service
	RejectXGateway        Reject = 1502 // the target rejected the gateway's connection
	RejectXDown           Reject = 1503 // service down for maintenance
	RejectXVersion        Reject = 1505 // SRT version not supported
	RejectXNoRoom         Reject = 1507 // no storage space
	RejectUserDefinedBase Reject = 2000 // codes from here on are free for applications
)

var rejectText = map[Reject]string{
	RejectNone:           "not rejected",
	RejectSystem:         "system function failed",
	RejectPeer:           "rejected by peer",
	RejectResource:       "resource allocation problem",
	RejectRogue:          "incorrect data in handshake",
	RejectBacklog:        "listener's backlog exceeded",
	RejectIPE:            "internal program error",
	RejectClose:          "socket is closing",
	RejectVersion:        "peer version too old",
	RejectRdvCookie:      "rendezvous cookie collision",
	RejectBadSecret:      "wrong password",
	RejectUnsecure:       "password required or unexpected",
	RejectMessageAPI:     "messageapi mismatch",
	RejectCongestion:     "congestion controller type collision",
	RejectFilter:         "packet filter settings error",
	RejectGroup:          "group settings collision",
	RejectTimeout:        "connection timeout",
	RejectCrypto:         "conflicting cryptographic configurations",
	RejectXFallback:      "callback handler interrupted",
	RejectXKeyNotSup:     "stream id key not supported",
	RejectXFilePath:      "resource path wrong or not found",
	RejectXHostNotFound:  "host not found",
	RejectXBadRequest:    "bad request",
	RejectXUnauthorized:  "unauthorized",
	RejectXOverload:      "server overloaded",
	RejectXForbidden:     "forbidden",
	RejectXNotFound:      "resource not found",
	RejectXBadMode:       "mode not supported",
	RejectXUnacceptable:  "parameters not acceptable",
	RejectXConflict:      "resource conflict (already in use)",
	RejectXNotSupMedia:   "media type not supported",
	RejectXLocked:        "resource locked",
	RejectXFailedDepend:  "dependency failed",
	RejectXISE:           "internal server error",
	RejectXUnimplemented: "not implemented",
	RejectXGateway:       "gateway rejected",
	RejectXDown:          "service down",
	RejectXVersion:       "version not supported",
	RejectXNoRoom:        "no room",
}

// String describes the reason with its number, e.g. "1404 resource not found".
func (r Reject) String() string {
	if s, ok := rejectText[r]; ok {
		return fmt.Sprintf("%d %s", uint32(r), s)
	}
	if r >= RejectUserDefinedBase {
		return fmt.Sprintf("%d application-defined", uint32(r))
	}
	return fmt.Sprintf("%d unknown", uint32(r))
}
