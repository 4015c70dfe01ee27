package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluicemedia/sluice/internal/testutil"
	"github.com/sluicemedia/sluice/storage"
)

// TestPostNoSecret: a webhook URL with a password and a token, whose receiver redirects (to a
// signed URL), answers an error page repeating the token, or is not there: the error kept in
// last_error shows no secret.
func TestPostNoSecret(t *testing.T) {
	const password, token = "pa55S3cret", "tok3nS3cret"
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/elsewhere?sig="+token, http.StatusFound)
			return
		}
		http.Error(w, "bad token "+r.URL.Query().Get("token"), http.StatusForbidden)
	}))
	defer rx.Close()
	secrets := func(base, path string) string {
		return strings.Replace(base, "http://", "http://hook:"+password+"@", 1) + path + "?token=" + token
	}
	d := New(nil, Options{})
	for _, u := range []string{
		secrets(rx.URL, "/moved"),
		secrets(rx.URL, "/in"),
		secrets(fmt.Sprintf("http://127.0.0.1:%d", testutil.FreePort(t)), "/in"),
		"http://hook:" + password + "@ho st/in?token=" + token,
	} {
		err := d.post(context.Background(), &storage.Webhook{Name: "rx", URL: u, Secret: "s"}, storage.Delivery{ID: "1", Type: "ping", Body: []byte("{}")})
		if err == nil {
			t.Fatalf("%s: no error", u)
		}
		t.Log(err)
		testutil.NoSecret(t, password, nil, err)
		testutil.NoSecret(t, token, nil, err)
	}
}
