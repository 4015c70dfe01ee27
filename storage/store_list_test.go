package storage_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluicemedia/sluice/storage"
)

// listNames runs ListPage and returns the vod_name of each document.
func listNames(t *testing.T, s *storage.Store, q storage.ListQuery) []string {
	t.Helper()
	docs, err := s.ListPage(context.Background(), storage.ModuleVOD, q)
	if err != nil {
		t.Fatalf("ListPage(%+v): %v", q, err)
	}
	var out []string
	for _, d := range docs {
		var p storage.Player
		if err := json.Unmarshal(d, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.VodName)
	}
	return out
}

func TestListPageFilterSortPage(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	// name, port, active, user id, transcoding; created one second apart in this order.
	rows := []struct {
		name   string
		port   int
		active bool
		user   string
		tc     bool
	}{
		{"c", 8000, true, "u2", false},
		{"a", 8100, false, "", true},
		{"8200", 8200, true, "u1", false},
		{"b", 8300, false, "u1", true},
		{" 8300 ", 8400, true, "", false},
	}
	for i, r := range rows {
		p := player(r.name, r.port)
		p.Created = at(time.Duration(i) * time.Second)
		p.Active, p.UserID = r.active, r.user
		if r.tc {
			p.Transcoding = &storage.Transcoding{VideoTranscoding: "libx264"}
		}
		if err := s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Create(ctx, rtmpServer("other module", 1935)); err != nil {
		t.Fatal(err)
	}
	all := []string{"c", "a", "8200", "b", " 8300 "}
	cases := []struct {
		name string
		q    storage.ListQuery
		want []string
	}{
		{"everything oldest first", storage.ListQuery{Limit: -1}, all},
		{"page", storage.ListQuery{Skip: 1, Limit: 2}, []string{"a", "8200"}},
		{"skip past the end", storage.ListQuery{Skip: 9, Limit: -1}, nil},
		{"bool", storage.ListQuery{Filter: []storage.Match{{Key: "active", Value: false}}, Limit: -1}, []string{"a", "b"}},
		{"number", storage.ListQuery{Filter: []storage.Match{{Key: "vod_port", Value: 8200.0}}, Limit: -1}, []string{"8200"}},
		{"json.Number", storage.ListQuery{Filter: []storage.Match{{Key: "vod_port", Value: json.Number("8.2e3")}}, Limit: -1}, []string{"8200"}},
		{"numeric string matches a number", storage.ListQuery{Filter: []storage.Match{{Key: "vod_port", Value: " 8300"}}, Limit: -1}, []string{"b"}},
		{"number matches a numeric string", storage.ListQuery{Filter: []storage.Match{{Key: "vod_name", Value: 8200}}, Limit: -1}, []string{"8200"}},
		{"number matches a spaced numeric string", storage.ListQuery{Filter: []storage.Match{{Key: "vod_name", Value: 8300.0}}, Limit: -1}, []string{" 8300 "}},
		{"strings compare exactly", storage.ListQuery{Filter: []storage.Match{{Key: "vod_name", Value: "8300"}}, Limit: -1}, nil},
		{"string", storage.ListQuery{Filter: []storage.Match{{Key: "user_id", Value: "u1"}}, Limit: -1}, []string{"8200", "b"}},
		{"null is absent", storage.ListQuery{Filter: []storage.Match{{Key: "user_id", Value: nil}}, Limit: -1}, []string{"a", " 8300 "}},
		{"unknown key is null", storage.ListQuery{Filter: []storage.Match{{Key: "nope", Value: nil}}, Limit: 2}, []string{"c", "a"}},
		{"unknown key", storage.ListQuery{Filter: []storage.Match{{Key: "nope", Value: 1.0}}, Limit: -1}, nil},
		{"object is not a string", storage.ListQuery{Filter: []storage.Match{{Key: "input", Value: "x"}}, Limit: -1}, nil},
		{"two filters", storage.ListQuery{Filter: []storage.Match{{Key: "active", Value: true}, {Key: "user_id", Value: "u1"}}, Limit: -1}, []string{"8200"}},
		{"sort string", storage.ListQuery{Sort: []storage.SortKey{{Key: "vod_name"}}, Limit: -1}, []string{" 8300 ", "8200", "a", "b", "c"}},
		{"sort number desc", storage.ListQuery{Sort: []storage.SortKey{{Key: "vod_port", Desc: true}}, Limit: 3}, []string{" 8300 ", "b", "8200"}},
		{"null first, ties oldest first", storage.ListQuery{Sort: []storage.SortKey{{Key: "user_id"}}, Limit: -1}, []string{"a", " 8300 ", "8200", "b", "c"}},
		{"desc: null last, ties still oldest first", storage.ListQuery{Sort: []storage.SortKey{{Key: "user_id", Desc: true}}, Limit: -1}, []string{"c", "8200", "b", "a", " 8300 "}},
		{"false before true", storage.ListQuery{Sort: []storage.SortKey{{Key: "active"}, {Key: "vod_port", Desc: true}}, Limit: -1}, []string{"b", "a", " 8300 ", "8200", "c"}},
		{"objects after absent", storage.ListQuery{Sort: []storage.SortKey{{Key: "transcoding", Desc: true}}, Limit: -1}, []string{"a", "b", "c", "8200", " 8300 "}},
		{"created desc", storage.ListQuery{Sort: []storage.SortKey{{Key: "created", Desc: true}}, Limit: 2}, []string{" 8300 ", "b"}},
		{"filter, sort, page", storage.ListQuery{Filter: []storage.Match{{Key: "active", Value: true}},
			Sort: []storage.SortKey{{Key: "vod_name", Desc: true}}, Skip: 1, Limit: 1}, []string{"8200"}},
	}
	for _, c := range cases {
		if got := listNames(t, s, c.q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if c.q.Skip == 0 && c.q.Limit < 0 {
			n, err := s.Count(ctx, storage.ModuleVOD, c.q.Filter)
			if err != nil || n != len(c.want) {
				t.Errorf("%s: Count = %d, %v; want %d", c.name, n, err, len(c.want))
			}
		}
	}
	for _, bad := range []storage.ListQuery{
		{Filter: []storage.Match{{Key: `a"b`, Value: 1.0}}},
		{Sort: []storage.SortKey{{Key: "a.b"}}},
		{Filter: []storage.Match{{Key: "input", Value: map[string]any{}}}},
	} {
		if _, err := s.ListPage(ctx, storage.ModuleVOD, bad); err == nil {
			t.Errorf("ListPage(%+v) accepted", bad)
		}
	}
}

// TestListPagePlan: the plain list reads the module's index in order and stops at the page; a
// sort on a document field sorts in a temporary tree, never scanning other modules' rows. On
// PostgreSQL both read the module's rows through its index (never the whole table) and sort them.
func TestListPagePlan(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	plain, err := s.ExplainList(ctx, storage.ModuleVOD, storage.ListQuery{Skip: 10, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	sorted, err := s.ExplainList(ctx, storage.ModuleVOD, storage.ListQuery{
		Filter: []storage.Match{{Key: "active", Value: true}}, Sort: []storage.SortKey{{Key: "vod_name"}}, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plain:\n%ssorted:\n%s", plain, sorted)
	if s.Backend() == "postgres" {
		for name, plan := range map[string]string{"plain": plain, "sorted": sorted} {
			if !strings.Contains(plan, "records_module_created") || !strings.Contains(plan, "Index Cond: (module = ") ||
				strings.Contains(plan, "Seq Scan") {
				t.Errorf("%s list plan does not read the module's index:\n%s", name, plan)
			}
		}
		return
	}
	if !strings.Contains(plain, "USING INDEX records_module_created") || strings.Contains(plain, "TEMP B-TREE") {
		t.Errorf("plain list plan:\n%s", plain)
	}
	if !strings.Contains(sorted, "(module=?)") || strings.Contains(sorted, "SCAN records") {
		t.Errorf("sorted list plan:\n%s", sorted)
	}
}
