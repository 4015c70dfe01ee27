package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

// countingProcs counts the Status calls rendering makes (one per rendered record).
type countingProcs struct {
	*fakeProcs
	status atomic.Int64
}

func (p *countingProcs) Status(m storage.Module, id string) Status {
	p.status.Add(1)
	return p.fakeProcs.Status(m, id)
}

// countingStore counts the recorded-file queries (one per rendered recording).
type countingStore struct {
	*storage.Store
	files atomic.Int64
}

func (s *countingStore) Files(ctx context.Context, recordID string) ([]storage.RecordedFile, error) {
	s.files.Add(1)
	return s.Store.Files(ctx, recordID)
}

// recordingsAPI returns an API over a real store holding n recordings named rec-0000... created a
// second apart; every third is active, output formats cycle mp4, flv, mov; every tenth has a file.
func recordingsAPI(t testing.TB, n int) (*env, *countingProcs, *countingStore) {
	t.Helper()
	st := bootstrappedStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	formats := []string{"mp4", "flv", "mov"}
	for i := range n {
		rec := &storage.Recording{Base: storage.Base{ID: storage.NewID(), Active: i%3 == 0, Created: t0.Add(time.Duration(i) * time.Second)},
			RecordingName: fmt.Sprintf("rec-%04d", i), RecordingType: "RECORDING_STREAM_TO_FILE", OutputFormat: formats[i%3],
			Input: storage.Input{InputType: kinds.InputGenerateVideo, EncodingRate: 24}}
		if err := st.Create(ctx, rec); err != nil {
			t.Fatal(err)
		}
		if i%10 != 0 {
			continue
		}
		f := storage.RecordedFile{ID: storage.NewID(), RecordID: rec.ID, Name: "a.mp4", Path: rec.RecordingName + "/a.mp4",
			Format: rec.OutputFormat, State: storage.FileComplete, Created: rec.Created}
		if err := st.AddFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	cs := &countingStore{Store: st}
	procs := &countingProcs{fakeProcs: newFakeProcs()}
	h, err := New(Config{Store: cs, Procs: procs, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := IssueToken(ctx, st, AdminUser, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, h: h, token: tok}, procs, cs
}

// TestGetAllPagesInTheStore: with 3 000 recordings, a page is filtered, sorted and cut in the
// database, only its records are rendered (one Status call and one file query each), and the
// total of matching records is right.
func TestGetAllPagesInTheStore(t *testing.T) {
	const n = 3000
	e, procs, store := recordingsAPI(t, n)
	names := func(from, to, step int) []string {
		var out []string
		for i := from; i != to; i += step {
			out = append(out, fmt.Sprintf("rec-%04d", i))
		}
		return out
	}
	var activeFLV []string // active and flv: i%3 == 0 and i%3 == 1 never meet
	var activeDesc []string
	for i := n - 1; i >= 0; i-- {
		if i%3 == 0 {
			activeDesc = append(activeDesc, fmt.Sprintf("rec-%04d", i))
		}
	}
	cases := []struct {
		name    string
		body    any
		want    []string
		total   int
		fileful bool // the page carries recordedFiles
	}{
		{"page", map[string]any{"skip": 100, "limit": 20}, names(100, 120, 1), n, true},
		{"last page", map[string]any{"skip": 2990, "limit": 20}, names(2990, 3000, 1), n, true},
		{"past the end", map[string]any{"skip": 5000, "limit": 20}, nil, n, true},
		{"sorted", map[string]any{"sort": map[string]any{"recording_name": -1}, "limit": 10}, names(2999, 2989, -1), n, true},
		{"created desc", map[string]any{"sort": map[string]any{"created": -1}, "skip": 1, "limit": 3}, names(2998, 2995, -1), n, true},
		{"filtered", map[string]any{"filter": map[string]any{"active": true, "output_format": "mp4"}, "sort": map[string]any{"recording_name": -1},
			"skip": 5, "limit": 10}, activeDesc[5:15], n / 3, true},
		{"nothing matches", map[string]any{"filter": map[string]any{"active": true, "output_format": "flv"}, "limit": 10}, activeFLV, 0, true},
	}
	for _, c := range cases {
		procs.status.Store(0)
		store.files.Store(0)
		start := time.Now()
		res := e.post("/api/recording/getAll", c.body)
		took := time.Since(start)
		got := names(0, 0, 1)
		for _, v := range res.arr() {
			doc := v.(map[string]any)
			name := doc["recording_name"].(string)
			got = append(got, name)
			var i int
			if _, err := fmt.Sscanf(name, "rec-%d", &i); err != nil {
				t.Fatal(err)
			}
			if files, ok := doc["recordedFiles"].([]any); !ok || (len(files) == 1) != (i%10 == 0) {
				t.Errorf("%s: %s has files %v", c.name, name, doc["recordedFiles"])
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if total := res.header.Get(totalHeader); total != strconv.Itoa(c.total) {
			t.Errorf("%s: %s %s, want %d", c.name, totalHeader, total, c.total)
		}
		if s, f := procs.status.Load(), store.files.Load(); s != int64(len(c.want)) || f != int64(len(c.want)) {
			t.Errorf("%s: %d records rendered and %d file queries for a page of %d", c.name, s, f, len(c.want))
		}
		t.Logf("%s: %d records in %v", c.name, len(got), took)
	}

	procs.status.Store(0)
	if res := e.post("/api/recording/getCount", map[string]any{"filter": map[string]any{"output_format": "mov"}}); res.obj()["count"] != float64(n/3) {
		t.Errorf("getCount %s", res.raw)
	}
	if s := procs.status.Load(); s != 0 {
		t.Errorf("getCount rendered %d records", s)
	}

	// A sort on the state (known at render time only) renders every record but queries files for
	// the page alone.
	procs.status.Store(0)
	store.files.Store(0)
	res := e.post("/api/recording/getAll", map[string]any{"sort": map[string]any{"state": 1, "recording_name": -1}, "limit": 5})
	if got := len(res.arr()); got != 5 || procs.status.Load() != n || store.files.Load() != 5 {
		t.Errorf("sort on state: %d records, %d rendered, %d file queries", got, procs.status.Load(), store.files.Load())
	}
	if first := res.arr()[0].(map[string]any)["recording_name"]; first != "rec-2999" {
		t.Errorf("sort on state, then name: first %v", first)
	}
	// A filter on recordedFiles needs them all.
	store.files.Store(0)
	res = e.post("/api/recording/getCount", map[string]any{"filter": map[string]any{"recordedFiles": nil}})
	if res.obj()["count"] != 0.0 || store.files.Load() != n {
		t.Errorf("filter on recordedFiles: %s with %d file queries", res.raw, store.files.Load())
	}
}

// TestStoreQueryMatchesMemory: random filters and sorts answered by the store give the records,
// in the order, that the API's in-memory rules give over the rendered records.
func TestStoreQueryMatchesMemory(t *testing.T) {
	storeQueryMatchesMemory(t, tempStore(t))
}

// storeQueryMatchesMemory is TestStoreQueryMatchesMemory on st, a new empty store.
func storeQueryMatchesMemory(t *testing.T, st *storage.Store) {
	ctx := context.Background()
	bootstrap(t, st)
	rng := rand.New(rand.NewPCG(13, 5))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	names := []string{"a", "B", "b", "8000", " 42 ", "42", "-1.5", "1e2", "zz", "", "é"}
	users := []string{"", "u1", "u2", "8000"}
	sizes := []float64{1, 2.5, 3, 42, 8000, -1.5}
	for i := range 60 {
		p := &storage.Player{Base: storage.Base{ID: storage.NewID(), Active: rng.IntN(2) == 0, UserID: users[rng.IntN(len(users))],
			Created: t0.Add(time.Duration(rng.IntN(20)) * time.Second)}, // ties on created
			VodName: fmt.Sprintf("%s#%d", names[rng.IntN(len(names))], i), VodPort: 8000 + i, HLSFragmentSize: sizes[rng.IntN(len(sizes))],
			LiveSyncDurationCount: rng.IntN(3), Input: storage.Input{InputType: kinds.InputGenerateVideo}}
		if i%7 == 0 {
			p.VodName = names[i/7] // bare, so that numeric names exist
		}
		if rng.IntN(3) == 0 {
			p.Transcoding = &storage.Transcoding{VideoTranscoding: "libx264"}
		}
		if err := st.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	s, err := newServer(Config{Store: st, Procs: newFakeProcs(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	m := vodModule()
	req := httptest.NewRequest(http.MethodPost, "/api/vod/getAll", nil)
	recs, err := s.records(req, m)
	if err != nil {
		t.Fatal(err)
	}
	var all []map[string]any
	for _, rec := range recs {
		doc, err := s.render(req, m, rec)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, doc)
	}
	keys := []string{"vod_name", "vod_port", "active", "user_id", "hls_fragment_size", "live_sync_duration_count", "transcoding", "input", "nope", "id", "created"}
	values := []any{nil, true, false, json.Number("8000"), json.Number("42"), json.Number("2.5"), json.Number("-1.5"), json.Number("0"),
		"8000", " 8000 ", "42", "1e2", "u1", "a", "", json.Number("1e2")}
	compared, nonEmpty := 0, 0
	for i := range 250 {
		q := listQuery{limit: -1, filter: map[string]any{}}
		for range rng.IntN(3) {
			k := keys[rng.IntN(len(keys))]
			if k == "created" {
				continue // filters on created compare the read format: served in memory
			}
			if rng.IntN(4) == 0 {
				q.filter[k] = all[rng.IntN(len(all))][k] // a value some record has
			} else {
				q.filter[k] = values[rng.IntN(len(values))]
			}
		}
		for range rng.IntN(3) {
			q.sort = append(q.sort, sortKey{field: keys[rng.IntN(len(keys))], dir: []int{1, -1}[rng.IntN(2)]})
		}
		if rng.IntN(2) == 0 {
			q.skip, q.limit = rng.IntN(10), 1+rng.IntN(20)
		}
		if _, ok := q.storeQuery(m); !ok {
			continue // an object filter value (transcoding, input) is served in memory
		}
		want := q.apply(all)
		got, total, err := s.list(req, m, q, false)
		if err != nil {
			t.Fatalf("query %d %+v: %v", i, q, err)
		}
		_, matched := q.pick(all)
		if ids(got) != ids(want) || total != matched {
			t.Fatalf("query %d %+v:\nstore  %s (%d)\nmemory %s (%d)", i, q, ids(got), total, ids(want), matched)
		}
		compared++
		if len(want) > 0 {
			nonEmpty++
		}
	}
	t.Logf("%d queries compared, %d with results", compared, nonEmpty)
	if compared < 150 || nonEmpty < 60 {
		t.Fatalf("only %d queries compared, %d with results", compared, nonEmpty)
	}
}

func ids(docs []map[string]any) string {
	var out []string
	for _, d := range docs {
		out = append(out, fmt.Sprint(d["vod_name"]))
	}
	return fmt.Sprintf("%q", out)
}

// BenchmarkGetAllPage: one page of 20 out of 3 000 recordings, sorted by name, with the
// recordings' files.
func BenchmarkGetAllPage(b *testing.B) {
	e, _, _ := recordingsAPI(b, 3000)
	body := map[string]any{"sort": map[string]any{"recording_name": -1}, "skip": 1000, "limit": 20}
	b.ReportAllocs()
	for b.Loop() {
		if res := e.post("/api/recording/getAll", body); res.code != http.StatusOK {
			b.Fatal(res.code)
		}
	}
}
