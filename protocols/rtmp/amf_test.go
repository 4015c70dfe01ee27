package rtmp

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// amfCases are decoding cases, shared with the fuzz seeds.
var amfCases = []struct {
	name string
	in   []byte
	want []any
	err  bool
}{
	{"number", []byte{0, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}, []any{1.0}, false},
	{"bool and null", []byte{1, 1, 5, 6}, []any{true, nil, nil}, false},
	{"string", []byte{2, 0, 3, 'a', 'b', 'c'}, []any{"abc"}, false},
	{"object", []byte{3, 0, 1, 'k', 2, 0, 1, 'v', 0, 0, 9}, []any{map[string]any{"k": "v"}}, false},
	{"ecma", []byte{8, 0, 0, 0, 1, 0, 1, 'n', 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}, []any{map[string]any{"n": 2.0}}, false},
	{"strict array", []byte{0x0a, 0, 0, 0, 2, 5, 1, 0}, []any{[]any{nil, false}}, false},
	{"hostile strict array", []byte{0x0a, 0x7f, 0xff, 0xff, 0xff, 0}, nil, true},
	{"hostile long string", []byte{0x0c, 0x7f, 0xff, 0xff, 0xff, 'a'}, nil, true},
	{"short string", []byte{2, 0, 9, 'a'}, nil, true},
	{"unknown marker", []byte{0x11, 0}, nil, true},
	{"unterminated object", []byte{3, 0, 1, 'k', 5}, nil, true},
}

func TestAMFDecode(t *testing.T) {
	for _, tc := range amfCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := amfDecode(tc.in)
			if tc.err {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("err %v, want ErrMalformed", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v, %v; want %#v", got, err, tc.want)
			}
		})
	}
}

func TestAMFDepth(t *testing.T) {
	b := []byte{}
	for range 100 {
		b = append(b, 0x0a, 0, 0, 0, 1)
	}
	b = append(b, 5)
	if _, err := amfDecode(b); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("deep nesting: %v", err)
	}
}

func TestAMFRoundTrip(t *testing.T) {
	in := []any{"connect", 1, amfObj{{"app", "live"}, {"n", 3.5}, {"ok", true}, {"list", []any{"a", nil}}},
		amfECMA{{"width", 640}}, strings.Repeat("x", 70000)}
	b := amfAppend(nil, in...)
	got, err := amfDecode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"connect", 1.0, map[string]any{"app": "live", "n": 3.5, "ok": true, "list": []any{"a", nil}},
		map[string]any{"width": 640.0}, strings.Repeat("x", 70000)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}
}

func FuzzAMF(f *testing.F) {
	for _, tc := range amfCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		vals, err := amfDecode(b)
		if err != nil {
			return
		}
		// What decodes encodes and decodes to the same values.
		again, err := amfDecode(amfAppend(nil, vals...))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if len(again) != len(vals) {
			t.Fatalf("%d values, then %d", len(vals), len(again))
		}
	})
}
