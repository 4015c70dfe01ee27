package srt

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

var streamIDCases = []struct {
	id, pubPrefix, recvPrefix string
	want                      StreamID
	ok                        bool
}{
	{"publisher/studio/cam1", "", "", StreamID{Mode: ModePublish, Name: "cam1", Server: "studio"}, true},
	{"receiver/studio/cam1", "", "", StreamID{Mode: ModeRequest, Name: "cam1", Server: "studio"}, true},
	{"publisher/My Studio/cam 1", "", "", StreamID{Mode: ModePublish, Name: "cam 1", Server: "my-studio"}, true},
	{"publisher/STUDIO/cam1", "", "", StreamID{Mode: ModePublish, Name: "cam1", Server: "studio"}, true},
	{"push/studio/cam1", "push", "pull", StreamID{Mode: ModePublish, Name: "cam1", Server: "studio"}, true},
	{"pull/studio/cam1", "push", "pull", StreamID{Mode: ModeRequest, Name: "cam1", Server: "studio"}, true},
	{"publisher/studio/cam1", "push", "pull", StreamID{}, false},
	{"#!::r=cam1,m=publish", "", "", StreamID{Mode: ModePublish, Name: "cam1"}, true},
	{"#!::m=request,r=cam1", "", "", StreamID{Mode: ModeRequest, Name: "cam1"}, true},
	{"#!::r=cam1", "", "", StreamID{Mode: ModeRequest, Name: "cam1"}, true},
	{"#!::u=alice,r=live/cam1,m=publish,s=abc123,h=example.com,t=stream", "", "",
		StreamID{Mode: ModePublish, Name: "live/cam1", User: "alice"}, true},
	{"#!::r=cam1,m=publish,x-custom=1", "", "", StreamID{Mode: ModePublish, Name: "cam1"}, true},
	{"#!::r=cam1,m=bidirectional", "", "", StreamID{}, false},
	{"#!::m=publish", "", "", StreamID{}, false},
	{"#!::r=a,r=b", "", "", StreamID{}, false},
	{"#!::r=cam1,,m=publish", "", "", StreamID{}, false},
	{"#!::", "", "", StreamID{}, false},
	{"#!::r", "", "", StreamID{}, false},
	{"#!::=x,r=cam1", "", "", StreamID{}, false},
	{"cam1", "", "", StreamID{Mode: ModePublish, Name: "cam1"}, true},
	{"Kamera Ü", "", "", StreamID{Mode: ModePublish, Name: "Kamera Ü"}, true},
	{"", "", "", StreamID{}, false},
	{"publisher/studio", "", "", StreamID{}, false},
	{"publisher//cam1", "", "", StreamID{}, false},
	{"publisher/studio/", "", "", StreamID{}, false},
	{"publisher/studio/a/b", "", "", StreamID{}, false},
	{"live/cam1", "", "", StreamID{}, false},
	{"cam\x001", "", "", StreamID{}, false},
	{"cam\n1", "", "", StreamID{}, false},
	{"\xff\xfe", "", "", StreamID{}, false},
	{strings.Repeat("a", 513), "", "", StreamID{}, false},
	{strings.Repeat("a", 512), "", "", StreamID{Mode: ModePublish, Name: strings.Repeat("a", 512)}, true},
}

func TestParseStreamID(t *testing.T) {
	for _, c := range streamIDCases {
		got, err := ParseStreamID(c.id, c.pubPrefix, c.recvPrefix)
		checkParsed(t, fmt.Sprintf("ParseStreamID(%q)", c.id), got, c.want, err, c.ok, ErrInvalidStreamID)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{"Studio": "studio", "My Studio A": "my-studio-a", "x": "x", "": ""} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseStreamID(f *testing.F) {
	for _, c := range streamIDCases {
		f.Add(c.id, c.pubPrefix, c.recvPrefix)
	}
	f.Fuzz(func(t *testing.T, id, pub, recv string) {
		sid, err := ParseStreamID(id, pub, recv)
		if err != nil {
			if !errors.Is(err, ErrInvalidStreamID) {
				t.Fatalf("error %v does not wrap ErrInvalidStreamID", err)
			}
			return
		}
		if sid.Mode != ModePublish && sid.Mode != ModeRequest {
			t.Fatalf("mode %v", sid.Mode)
		}
		if sid.Name == "" || !utf8.ValidString(sid.Name) || len(sid.Name) > maxStreamIDLen {
			t.Fatalf("name %q", sid.Name)
		}
		if strings.ContainsAny(sid.Name, "\x00\n\r") {
			t.Fatalf("name %q has control characters", sid.Name)
		}
		if !strings.HasPrefix(id, haivisionPrefix) && strings.Contains(sid.Name, "/") {
			t.Fatalf("name %q has a slash", sid.Name)
		}
		if sid.Server != Slug(sid.Server) {
			t.Fatalf("server %q is not a slug", sid.Server)
		}
	})
}
