package rtmp

import (
	"fmt"
	"strings"
)

// command is a decoded command message: its name, transaction ID and the arguments that
// follow (the command object first, usually null).
type command struct {
	Name     string
	Txn      float64
	Args     []any
	StreamID uint32
}

// parseCommand decodes a command message (AMF0, or AMF3 whose body starts with a 0 byte and
// continues in AMF0, as every encoder sends it).
func parseCommand(msg message) (command, error) {
	vals, err := amfDecode(amfBody(msg))
	if err != nil {
		return command{}, fmt.Errorf("rtmp: command: %w", err)
	}
	name, ok := value[string](vals, 0)
	if !ok {
		return command{}, fmt.Errorf("rtmp: command without a name: %w", ErrMalformed)
	}
	txn, _ := value[float64](vals, 1)
	var args []any
	if len(vals) > 2 {
		args = vals[2:]
	}
	return command{Name: name, Txn: txn, Args: args, StreamID: msg.StreamID}, nil
}

// amfBody returns the AMF0 bytes of a command or data message.
func amfBody(msg message) []byte {
	b := msg.Body
	if (msg.Type == msgCommandAMF3 || msg.Type == msgDataAMF3) && len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

// value returns vals[i] as a T.
func value[T any](vals []any, i int) (T, bool) {
	var zero T
	if i < 0 || i >= len(vals) {
		return zero, false
	}
	v, ok := vals[i].(T)
	return v, ok
}

// object returns the first argument that is an object: the command object or the info
// object of a status.
func (c command) object() map[string]any {
	for _, a := range c.Args {
		if m, ok := a.(map[string]any); ok {
			return m
		}
	}
	return nil
}

// str returns key of m as a string, "" when absent.
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// status returns the level, code and description of an onStatus or _error command.
func (c command) status() (level, code, description string) {
	m := c.info()
	return str(m, "level"), str(m, "code"), str(m, "description")
}

// info returns the info object: the last object argument (_result and _error carry the
// properties first, then the information).
func (c command) info() map[string]any {
	var m map[string]any
	for _, a := range c.Args {
		if o, ok := a.(map[string]any); ok {
			m = o
		}
	}
	return m
}

// streamName returns the name argument of publish or play (the second, after null).
func (c command) streamName() string {
	s, _ := value[string](c.Args, 1)
	return s
}

// stripQuery cuts the query part off a stream key or an app name ("key?token=x" is "key").
func stripQuery(s string) string {
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Status codes (Adobe's NetConnection and NetStream onStatus codes).
const (
	codeConnectSuccess   = "NetConnection.Connect.Success"
	codeConnectRejected  = "NetConnection.Connect.Rejected"
	codePublishStart     = "NetStream.Publish.Start"
	codePublishBadName   = "NetStream.Publish.BadName"
	codePublishFailed    = "NetStream.Publish.Failed"
	codePlayReset        = "NetStream.Play.Reset"
	codePlayStart        = "NetStream.Play.Start"
	codePlayStop         = "NetStream.Play.Stop"
	codePlayComplete     = "NetStream.Play.Complete"
	codePlayNotFound     = "NetStream.Play.StreamNotFound"
	codePlayFailed       = "NetStream.Play.Failed"
	codePlayUnpublish    = "NetStream.Play.UnpublishNotify"
	codeUnpublishSuccess = "NetStream.Unpublish.Success"
	levelStatus          = "status"
	levelError           = "error"
)
