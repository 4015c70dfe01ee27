package passwd

import (
	"strings"
	"testing"
)

// TestFromAddress: the query's password (RTMP's and HTTP's listen inputs), none, or an error
// that does not show the address.
func TestFromAddress(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		given, ok bool
	}{
		{"", "", false, true},
		{"rtmp://0.0.0.0:1935/live/cam", "", false, true},
		{"rtmp://0.0.0.0:1935/live/cam?password=s3cret-Pass.1", "s3cret-Pass.1", true, true},
		{"http://0.0.0.0:8080/in?x=1&password=a%7Eb", "a~b", true, true},
		{"http://0.0.0.0:8080/in?password=a&password=b", "", false, false},
		{"http://0.0.0.0:8080/in?password=%zz", "", false, false},
		{"http://[::1/in?password=s3cret", "", false, false},
		{"rtmp://:1935?token=x", "", false, true},
		{"rtmp://0.0.0.0:1935/live?password=s3cret-Pass.1&x=1", "s3cret-Pass.1", true, true},
		{"rtmps://:1935/?password=a%7Eb", "a~b", true, true},
		{"http://:8080/in?password=", "", true, true},
	} {
		got, given, err := FromAddress(c.raw)
		if got != c.want || given != c.given || (err == nil) != c.ok {
			t.Errorf("%q: %q %v %v", c.raw, got, given, err)
		}
		if err != nil && (len(c.raw) > 0 && strings.Contains(err.Error(), "s3cret")) {
			t.Errorf("%q: the error shows the password: %v", c.raw, err)
		}
	}
}

// TestCheck: no password asked, none given, a wrong one (longer, shorter, empty), the right one.
func TestCheck(t *testing.T) {
	for _, c := range []struct {
		want, got string
		given     bool
		why       string
	}{
		{"", "", false, ""},
		{"", "anything", true, ""},
		{"s3cret-Pass.1", "", false, Missing},
		{"s3cret-Pass.1", "", true, Wrong},
		{"s3cret-Pass.1", "s3cret-Pass.12", true, Wrong},
		{"s3cret-Pass.1", "s3cret", true, Wrong},
		{"s3cret-Pass.1", "s3cret-Pass.1", true, ""},
	} {
		if why := Check(c.want, c.got, c.given); why != c.why {
			t.Errorf("Check(%q, %q, %v) = %q, want %q", c.want, c.got, c.given, why, c.why)
		}
	}
}
