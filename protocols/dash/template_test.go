package dash

import (
	"errors"
	"testing"
)

// templateCases are the table of TestExpand, also fuzz seeds.
var templateCases = []struct {
	tmpl, want string
	ok         bool
}{
	{"chunk-stream$RepresentationID$-$Number%05d$.m4s", "chunk-streamv1-00042.m4s", true},
	{"init-$RepresentationID$.mp4", "init-v1.mp4", true},
	{"$Bandwidth$/$Time$.m4s", "2500000/90000.m4s", true},
	{"seg_$Number$.m4s?x=$$1", "seg_42.m4s?x=$1", true},
	{"$Number%d$", "42", true},
	{"$Time%012d$", "000000090000", true},
	{"$Number%3d$", "", false},
	{"$Number%0d$", "", false},
	{"$Number%099d$", "", false},
	{"$RepresentationID%05d$", "", false},
	{"$SubNumber$", "", false},
	{"open $Number", "", false},
	{"plain.m4s", "plain.m4s", true},
}

func TestExpand(t *testing.T) {
	v := tmplVars{repID: "v1", bandwidth: 2500000, number: 42, time: 90000}
	for _, tc := range templateCases {
		got, err := expand(tc.tmpl, v)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
		if err != nil && !errors.Is(err, errTemplate) {
			t.Errorf("%q: %v does not wrap errTemplate", tc.tmpl, err)
		}
	}
}
