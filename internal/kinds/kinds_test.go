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

func TestValidRTMPPassword(t *testing.T) {
	for s, want := range map[string]bool{
		"":                       false,
		"abcdefghi":              false,
		"abcdefghij":             true,
		"A-Z.a_z~09":             true,
		"abcdefghi ":             false,
		"abcdefghi%":             false,
		"abcdefghi?":             false,
		"abcdefghié":             false,
		strings.Repeat("a", 128): true,
		strings.Repeat("a", 129): false,
	} {
		if got := ValidRTMPPassword(s); got != want {
			t.Errorf("ValidRTMPPassword(%q) = %v", s, got)
		}
	}
}

func TestValidListenUser(t *testing.T) {
	for s, want := range map[string]bool{
		"":                      false,
		"a":                     true,
		"A-Z.a_z~09":            true,
		"a b":                   false,
		"a:b":                   false,
		"a@b":                   false,
		"é":                     false,
		strings.Repeat("a", 64): true,
		strings.Repeat("a", 65): false,
	} {
		if got := ValidListenUser(s); got != want {
			t.Errorf("ValidListenUser(%q) = %v", s, got)
		}
	}
}
