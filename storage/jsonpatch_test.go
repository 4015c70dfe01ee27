package storage

import "testing"

func TestSetMembers(t *testing.T) {
	set := []member{{"active", []byte("true")}, {"modified", []byte(`"2026-01-02T03:04:05Z"`)}}
	for _, c := range []struct{ in, want string }{
		{`{"id":"x","active":false,"modified":"old","n":{"active":1}}`,
			`{"id":"x","active":true,"modified":"2026-01-02T03:04:05Z","n":{"active":1}}`},
		{`{"modified":"old","id":"x"}`, `{"modified":"2026-01-02T03:04:05Z","id":"x","active":true}`},
		{`{}`, `{"active":true,"modified":"2026-01-02T03:04:05Z"}`},
		{`{"a": [1, 2],  "active" : null }`, `{"a": [1, 2],  "active" : true ,"modified":"2026-01-02T03:04:05Z"}`},
	} {
		got, err := setMembers([]byte(c.in), set)
		if err != nil || string(got) != c.want {
			t.Errorf("setMembers(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `[]`, `{"a":1`, `{"a":1}{}`, `"x"`} {
		if got, err := setMembers([]byte(bad), set); err == nil {
			t.Errorf("setMembers(%q) = %s, want an error", bad, got)
		}
	}
}
