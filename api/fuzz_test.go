package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

// fuzzValidators are the whole-record validators, by module path.
var fuzzValidators = map[string]func(*fields) storage.Record{
	"vod":          func(f *fields) storage.Record { return validatePlayer(f) },
	"restream":     func(f *fields) storage.Record { return validateRestream(f) },
	"recording":    func(f *fields) storage.Record { return validateRecording(f) },
	"srt-servers":  func(f *fields) storage.Record { return validateSRTServer(f) },
	"rtmp-servers": func(f *fields) storage.Record { return validateRTMPServer(f) },
}

func fuzzSeeds() [][]byte {
	var seeds [][]byte
	add := func(v any) {
		raw, _ := json.Marshal(v)
		seeds = append(seeds, raw)
	}
	add(playerBody("p", 8000))
	add(merge(playerBody("p", 8000), map[string]any{"id": "$ID", "vod_port": "4000", "transcoding": map[string]any{"gop": "48"}}))
	add(restreamBody("r"))
	add(merge(restreamBody("r"), map[string]any{"_id": "$ID", "input": []any{map[string]any{"input_type": "INPUT_TYPE_SRT_SOFTWARE",
		"input_module_id": "$SRT", "input_stream_id": "publisher/s/cam"}}}))
	add(merge(restreamBody("r"), map[string]any{"input": map[string]any{"input_type": "INPUT_TYPE_RTMP_HARDWARE",
		"input_server_id": "$RTMP", "input_stream_id": "key"}}))
	add(recordingBody("c"))
	add(merge(recordingBody("c"), map[string]any{"id": "$ID", "recording_type": "RECORDING_STREAM_TO_MEMORY", "memory_duration_sec": 10}))
	add(merge(srtServerBody("s", 9000), map[string]any{"server_passphrase": "0123456789", "server_maxbw": "1000000"}))
	add(map[string]any{"id": "$ID", "server_name": "x", "publisher_prefix": "p", "receiver_prefix": "p"})
	add(rtmpServerBody("m", 1935))
	add(merge(rtmpServerBody("m", 1935), map[string]any{"server_publish_password": "0123456789", "server_play_password": ""}))
	for _, c := range transcodingCases {
		seeds = append(seeds, []byte(`{"id":"$ID","transcoding":`+c.body+`}`))
	}
	for _, s := range []string{"", "{", "null", "[]", `{"input":[]}`, `{"input":[{},{}]}`, `{"vod_port":1e999}`,
		`{"input":{"input_type":"INPUT_TYPE_UDP_URL","input_stream_url":"udp://[::1"}}`, `{"id":"$ID","active":null}`} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// FuzzDecodeBodies feeds arbitrary bytes to every create and update handler and to the
// validators: no panic, and never a 500.
func FuzzDecodeBodies(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	var e *env
	var ids map[string]string
	runs := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		// A fresh server now and then keeps the store small, so that executions stay fast.
		if runs%200 == 0 {
			e, ids = fuzzEnv(t)
		}
		runs++
		e.t = t
		for mod, id := range ids {
			body := bytes.ReplaceAll(data, []byte("$ID"), []byte(id))
			body = bytes.ReplaceAll(body, []byte("$SRT"), []byte(ids["srt-servers"]))
			body = bytes.ReplaceAll(body, []byte("$RTMP"), []byte(ids["rtmp-servers"]))
			for _, verb := range []string{"create", "update"} {
				if res := e.post("/api/"+mod+"/"+verb, body); res.code >= 500 {
					t.Fatalf("%s %s answered %d: %s", mod, verb, res.code, res.raw)
				}
			}
			checkValidator(t, e.store, fuzzValidators[mod], body)
		}
		for _, v := range []func(*fields){
			func(f *fields) { validateInput(f) }, func(f *fields) { validateOutput(f) }, func(f *fields) { validateTranscoding(f) },
		} {
			if m, err := decodeObject(data); err == nil {
				v(newFields(context.Background(), e.store, m))
			}
		}
	})
}

func fuzzEnv(t *testing.T) (*env, map[string]string) {
	e := newEnv(t)
	return e, map[string]string{
		"vod":          e.mustCreate("vod", playerBody("fx", 30000)),
		"restream":     e.mustCreate("restream", restreamBody("fx")),
		"recording":    e.mustCreate("recording", recordingBody("fx")),
		"srt-servers":  e.mustCreate("srt-servers", srtServerBody("fx", 30010)),
		"rtmp-servers": e.mustCreate("rtmp-servers", rtmpServerBody("fx", 30020)),
	}
}

// checkValidator runs validate on body; a record it accepts must be accepted again as stored,
// since updates re-validate the stored document.
func checkValidator(t *testing.T, st Store, validate func(*fields) storage.Record, body []byte) {
	m, err := decodeObject(body)
	if err != nil {
		return
	}
	f := newFields(context.Background(), st, m)
	f.skip(generatedKeys...)
	rec := validate(f)
	if f.err() != nil {
		if ae := (*apiError)(nil); !errors.As(f.err(), &ae) || ae.Status != http.StatusBadRequest {
			t.Fatalf("validator error %v", f.err())
		}
		return
	}
	doc, err := toDoc(rec)
	if err != nil {
		t.Fatal(err)
	}
	f2 := newFields(context.Background(), st, doc)
	f2.skip(generatedKeys...)
	rec2 := validate(f2)
	if f2.err() != nil {
		t.Fatalf("stored form of a valid record refused: %v\n%s", f2.err(), body)
	}
	d1, _ := json.Marshal(stripIDs(rec))
	d2, _ := json.Marshal(stripIDs(rec2))
	if !bytes.Equal(d1, d2) {
		t.Fatalf("record changed on re-validation:\n%s\n%s", d1, d2)
	}
}

// stripIDs blanks the generated input/output ids of a restream.
func stripIDs(r storage.Record) storage.Record {
	if rs, ok := r.(*storage.Restream); ok {
		c := *rs
		c.Input.ID, c.Output.ID = "", ""
		return &c
	}
	return r
}

// FuzzOtherInput: no address panics the INPUT_TYPE_OTHER check, and under the default policy
// an accepted address is a scheme://... URL of a default scheme.
func FuzzOtherInput(f *testing.F) {
	for _, c := range otherCases {
		f.Add(c.addr)
	}
	for _, s := range []string{"concat:a|b|c", "subfile,", "subfile,:", "a+b+c+d+e+f:x", "cache:", "::", "+:x", "crypto+:x"} {
		f.Add(s)
	}
	wide := &InputPolicy{Schemes: []string{"cache", "async", "crypto", "concat", "concatf", "subfile", "hls", "data", "http"}}
	f.Fuzz(func(t *testing.T, addr string) {
		_ = wide.Check(addr)
		var def *InputPolicy
		if def.Check(addr) != nil {
			return
		}
		scheme, _, ok := strings.Cut(addr, "://")
		if !ok || !slices.Contains(DefaultInputSchemes, strings.ToLower(scheme)) {
			t.Fatalf("%q accepted by the default policy", addr)
		}
	})
}

// FuzzListQuery: any list body answers without a 500, and a query the store runs selects the
// records, in the order, that the in-memory rules select.
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{`{}`, `{"limit":3,"skip":1}`, `{"sort":{"vod_port":-1,"vod_name":1}}`, `{"filter":{"active":true}}`,
		`{"filter":{"vod_name":8000}}`, `{"filter":{"user_id":null},"sort":{"created":-1}}`, `{"filter":{"vod_port":"8001"}}`,
		`{"filter":{"transcoding":{"video_transcoding":"libx264"}}}`, `{"sort":{"state":1}}`, `{"filter":{"_id":"x"}}`,
		`{"filter":{"a\"b":1}}`, `{"sort":{"hls_fragment_size":1}}`, `{"filter":{"vod_port":1e999}}`} {
		f.Add([]byte(s))
	}
	s, all := fuzzListServer(f)
	m := vodModule()
	f.Fuzz(func(t *testing.T, data []byte) {
		req := httptest.NewRequest(http.MethodPost, "/api/vod/getAll", bytes.NewReader(data))
		q, err := s.readListQuery(req)
		if err != nil {
			return
		}
		got, total, err := s.list(req, m, q, false)
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		idx, matched := q.pick(all)
		want := make([]map[string]any, len(idx))
		for i, j := range idx {
			want[i] = all[j]
		}
		if _, pushed := q.storeQuery(m); pushed && (ids(got) != ids(want) || total != matched) {
			t.Fatalf("%s:\nstore  %s (%d)\nmemory %s (%d)", data, ids(got), total, ids(want), matched)
		}
	})
}

// fuzzListServer is a server over a real store with a few players of varied fields, and their
// rendered documents.
func fuzzListServer(t testing.TB) (*server, []map[string]any) {
	st := tempStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, name := range []string{"a", "b", "8000", " 8001 ", "B", "é", "x"} {
		p := &storage.Player{Base: storage.Base{ID: storage.NewID(), Active: i%2 == 0, UserID: []string{"", "u1", "8001"}[i%3],
			Created: t0.Add(time.Duration(i/2) * time.Second)}, VodName: name, VodPort: 8000 + i%3*1000 + i, HLSFragmentSize: float64(i%3) + 0.5,
			Input: storage.Input{InputType: kinds.InputGenerateVideo}}
		if i%3 == 0 {
			p.Transcoding = &storage.Transcoding{VideoTranscoding: "libx264"}
		}
		if err := st.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	s, err := newServer(Config{Store: st, Procs: newFakeProcs()})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/vod/getAll", nil)
	recs, err := s.records(req, vodModule())
	if err != nil {
		t.Fatal(err)
	}
	var all []map[string]any
	for _, rec := range recs {
		doc, err := s.render(req, vodModule(), rec)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, doc)
	}
	return s, all
}
