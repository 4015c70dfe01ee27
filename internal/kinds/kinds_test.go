package kinds

import (
	"strings"
	"testing"
)

// TestTablesCoverTheLists: every listed type has its entry and the other way round, once each;
// a listen input has a transport and an URL scheme, a server input neither.
func TestTablesCoverTheLists(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, typ := range InputTypes() {
		in, ok := InputOf(typ)
		if !ok || seen[typ] || in.Word == "" {
			t.Errorf("input type %s: listed twice or without its entry (%+v)", typ, in)
		}
		seen[typ] = true
		if in.Listen != "" && (in.Listen != TCP && in.Listen != UDP || len(in.Schemes) == 0) {
			t.Errorf("listen input %s: %+v", typ, in)
		}
		if in.Server != "" && (in.Listen != "" || len(in.Schemes) > 0) {
			t.Errorf("server input %s: %+v", typ, in)
		}
	}
	if len(seen) != len(inputs) {
		t.Errorf("%d input types listed, %d in the table", len(seen), len(inputs))
	}
	seen = map[string]bool{}
	for _, typ := range OutputTypes() {
		out, ok := OutputOf(typ)
		if !ok || seen[typ] || out.Word == "" || len(out.Schemes) == 0 {
			t.Errorf("output type %s: listed twice or without its entry (%+v)", typ, out)
		}
		seen[typ] = true
	}
	if len(seen) != len(outputs) {
		t.Errorf("%d output types listed, %d in the table", len(seen), len(outputs))
	}
	if _, ok := InputOf("INPUT_TYPE_NONE"); ok {
		t.Error("an unknown input type has an entry")
	}
}

// TestValidCredentials: an RTMP password is 10 to 128 of A-Z a-z 0-9 . _ ~ -, a listen input's
// user name 1 to 64 of them.
func TestValidCredentials(t *testing.T) {
	for _, c := range []struct {
		s              string
		password, user bool
	}{
		{"", false, false},
		{"a", false, true},
		{"abcdefghi", false, true},
		{"abcdefghij", true, true},
		{"A-Z.a_z~09", true, true},
		{"abcdefghi ", false, false},
		{"abcdefghi%", false, false},
		{"abcdefghi?", false, false},
		{"abcdefghi:", false, false},
		{"abcdefghi@", false, false},
		{"abcdefghié", false, false},
		{strings.Repeat("a", 64), true, true},
		{strings.Repeat("a", 65), true, false},
		{strings.Repeat("a", 128), true, false},
		{strings.Repeat("a", 129), false, false},
	} {
		if got := ValidRTMPPassword(c.s); got != c.password {
			t.Errorf("ValidRTMPPassword(%q) = %v", c.s, got)
		}
		if got := ValidListenUser(c.s); got != c.user {
			t.Errorf("ValidListenUser(%q) = %v", c.s, got)
		}
	}
}
