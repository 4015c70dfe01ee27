package redact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		opts []Option
		want string
	}{
		{"", nil, ""},
		{"rtsp://user:pa55word@cam.lan:554/live", nil, "rtsp://user@cam.lan:554/live"},
		{"rtsp://:pa55word@cam.lan/live", nil, "rtsp://cam.lan/live"},
		{"rtsp://user@cam.lan/live", nil, "rtsp://user@cam.lan/live"},
		{"rtsp://user:pa55word@cam.lan/live?rtsp_transport=tcp", nil, "rtsp://user@cam.lan/live?rtsp_transport=tcp"},
		{"https://cdn.example/live.m3u8?token=tok3nS3cret&x=1", nil, "https://cdn.example/live.m3u8?token=REDACTED&x=REDACTED"},
		{"https://b.s3.example/o.mpd?X-Amz-Signature=abcdef&X-Amz-Credential=AKIA%2F1", nil,
			"https://b.s3.example/o.mpd?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"},
		{"http://h/in?password=pw;streamid=cam", nil, "http://h/in?password=REDACTED;streamid=cam"},
		{"http://h/in?streamid=cam;passphrase=secret", nil, "http://h/in?streamid=cam;passphrase=REDACTED"},
		{"http://h/in?bare&mode=&method=PUT", nil, "http://h/in?REDACTED&mode=&method=PUT"},
		{"http://h/in?token=", nil, "http://h/in?token="},
		{"http://h/in?method", nil, "http://h/in?method"},
		{"http://h/in?", nil, "http://h/in?"},
		{"srt://h:9000?streamid=%23!::r=cam1&passphrase=0123456789&latency=200", nil,
			"srt://h:9000?streamid=%23!::r=cam1&passphrase=REDACTED&latency=200"},
		{"srt://h:9000?stream%69d=cam1", nil, "srt://h:9000?stream%69d=cam1"},
		{"udp://239.0.0.1:1234?pkt_size=1316&ttl=4", nil, "udp://239.0.0.1:1234?pkt_size=1316&ttl=4"},
		{"http://h/p#access_token=abc", nil, "http://h/p#REDACTED"},
		{"rtmp://u:p@host/live/k?token=secret", nil, "rtmp://u@host/live/k?token=REDACTED"},
		{"rtmp://u:p@host/live/k?token=secret", []Option{NoUser, StreamKey}, "rtmp://host/live/REDACTED?token=REDACTED"},
		{"rtmp://host:1935/live/streamKEY", []Option{StreamKey}, "rtmp://host:1935/live/REDACTED"},
		{"rtmp://host/app/_definst_/k%20ey", []Option{StreamKey}, "rtmp://host/app/REDACTED"},
		{"rtmp://host/live", []Option{StreamKey}, "rtmp://host/live"},
		{"rtmp://host/live/", []Option{StreamKey}, "rtmp://host/live/"},
		{"https://user:pw@hooks.example/in?sig=1", []Option{NoUser}, "https://hooks.example/in?sig=REDACTED"},
		{"mailto:joe:pw@example.com", nil, "mailto:joe@example.com"},
		{"/var/media/clip.ts", nil, "/var/media/clip.ts"},
		{"rtsp://user:pa ss@cam/live", nil, Unparsable},
		{"http://h ost/?token=x", nil, Unparsable},
		{":554/live?token=x", nil, Unparsable},
		{"postgres://sluice:dbpass@db:5432/sluice?sslmode=require&password=other", nil,
			"postgres://sluice@db:5432/sluice?sslmode=REDACTED&password=REDACTED"},
	} {
		if got := URL(tc.in, tc.opts...); got != tc.want {
			t.Errorf("URL(%q, %v) = %q, want %q", tc.in, tc.opts, got, tc.want)
		}
	}
	if got := Parsed(nil); got != Unparsable {
		t.Errorf("Parsed(nil) = %q", got)
	}
}

func TestText(t *testing.T) {
	raw := "rtmp://user:pa55word@h/live/KEY1234?token=tok3nS3cret"
	for _, tc := range []struct {
		in   string
		opts []Option
		want string
	}{
		{"ffmpeg: " + raw + ": refused", nil, "ffmpeg: rtmp://user@h/live/KEY1234?token=REDACTED: refused"},
		{"connect to h: token tok3nS3cret refused for pa55word", nil, "connect to h: token REDACTED refused for REDACTED"},
		{"stream KEY1234 not found", []Option{StreamKey}, "stream REDACTED not found"},
		{"stream KEY1234 not found", nil, "stream KEY1234 not found"},
		{`parse "` + raw + `": bad`, []Option{NoUser, StreamKey}, `parse "rtmp://h/live/REDACTED?token=REDACTED": bad`},
	} {
		if got := Text(tc.in, raw, tc.opts...); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// A short secret is hidden in the address, not hunted for in the rest of the text.
	if got := Text("the pw is set: http://u:pw@h/", "http://u:pw@h/"); got != "the pw is set: http://u@h/" {
		t.Errorf("Text, short password = %q", got)
	}
}

var errTest = errors.New("test")

func TestError(t *testing.T) {
	if Error(nil, "http://h/") != nil {
		t.Error("Error(nil) is not nil")
	}
	plain := fmt.Errorf("no route: %w", errTest)
	if got := Error(plain, "http://h/?token=tok3nS3cret"); got.Error() != plain.Error() || !errors.Is(got, errTest) {
		t.Errorf("Error of a clean error = %v, want it as it was", got)
	}

	// net/http's *url.Error repeats the URL, query included; so does url.Parse's.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	secret := "http://127.0.0.1:9/live.m3u8?token=tok3nS3cret"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "tok3nS3cret") {
		t.Fatalf("net/http's error %v does not show the token: the test needs another leak", err)
	}
	wrapped := fmt.Errorf("playlist: %w", err)
	got := Error(wrapped, "")
	if strings.Contains(got.Error(), "tok3nS3cret") || !strings.Contains(got.Error(), "token=REDACTED") {
		t.Errorf("Error = %q", got)
	}
	if !errors.Is(got, context.Canceled) {
		t.Errorf("Error(%v) no longer is context.Canceled", wrapped)
	}
	var ue *url.Error
	if !errors.As(got, &ue) {
		t.Errorf("Error(%v) no longer is a *url.Error", wrapped)
	}

	host := "cam lan" // a space: the address does not parse
	_, perr := url.Parse("rtsp://user:pa55word@" + host + "/live")
	got = Error(fmt.Errorf("rtsp pull: %w", perr), "")
	if strings.Contains(got.Error(), "pa55word") || !strings.Contains(got.Error(), Unparsable) {
		t.Errorf("Error of url.Parse's error = %q", got)
	}

	// Joined errors are searched too, and the raw address of the caller.
	j := errors.Join(errTest, &url.Error{Op: "Post", URL: "http://h/x?sig=s1gnatureX", Err: errTest})
	got = Error(fmt.Errorf("send http://u:pa55word@h/: %w", j), "http://u:pa55word@h/")
	if s := got.Error(); strings.Contains(s, "s1gnatureX") || strings.Contains(s, "pa55word") {
		t.Errorf("Error of joined errors = %q", s)
	}
}

func TestHide(t *testing.T) {
	if Hide(nil, "x") != nil {
		t.Error("Hide(nil) is not nil")
	}
	err := fmt.Errorf("stream %q not found: %w", "camKEY1", errTest)
	got := Hide(err, "camKEY1", "k")
	if got.Error() != `stream "REDACTED" not found: test` || !errors.Is(got, errTest) {
		t.Errorf("Hide = %v", got)
	}
	if got := Hide(err, "other", ""); got.Error() != err.Error() || !errors.Is(got, errTest) {
		t.Errorf("Hide with nothing to hide = %v, want it as it was", got)
	}
}

// FuzzRedact checks that URL never panics and that, for an address that parses, no password,
// query value (of a key not shown), fragment or stream key of it appears in its redaction.
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"rtsp://user:pa55word@cam.lan:554/live?rtsp_transport=tcp",
		"https://cdn.example/live.m3u8?token=tok3nS3cret&x=1#frag",
		"srt://h:9000?streamid=%23!::r=cam1&passphrase=0123456789&latency=200",
		"rtmp://host/app/_definst_/streamkey123?password=abcdefgh",
		"http://h/in?a;b=c&&d=%zz",
		"mailto:joe:s3cretpw@example.com?subject=x",
		"http://[::1]:80/p?q=%E2%82%AC%E2%82%AC%E2%82%AC",
		"rtsp://user:pa ss@cam/live",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(NoUser|StreamKey))
	}
	f.Fuzz(func(t *testing.T, raw string, o uint8) {
		opts := []Option{Option(o)}
		out := URL(raw, opts...)
		_ = Text(raw+" "+raw, raw, opts...)
		_ = Error(errors.Join(errTest, &url.Error{Op: "Get", URL: raw, Err: errTest}), raw, opts...)
		u, err := url.Parse(raw)
		if err != nil {
			if out != Unparsable {
				t.Fatalf("URL(%q) = %q, want %q", raw, out, Unparsable)
			}
			return
		}
		for _, s := range fuzzSecrets(u, Option(o)) {
			// A secret counts when it cannot be explained by what is shown: long enough, one
			// piece (no separator), and found in no shown part of the address.
			if len(s) < 8 || strings.ContainsAny(s, "=&;?@:/#%+") || strings.Contains(fuzzShown(u, Option(o)), s) {
				continue
			}
			if strings.Contains(out, s) {
				t.Fatalf("URL(%q) = %q shows the secret %q", raw, out, s)
			}
		}
	})
}

// fuzzSecrets are, written independently of the package's own list, the parts of u that must
// not be shown: the password, every value of a key not in the shown list, the fragment, the
// user name with NoUser and the stream key with StreamKey.
func fuzzSecrets(u *url.URL, o Option) []string {
	var out []string
	if p, ok := u.User.Password(); ok {
		out = append(out, p)
	}
	if o&NoUser != 0 && u.User != nil {
		out = append(out, u.User.Username())
	}
	out = append(out, u.Fragment, u.RawFragment)
	if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
		_, pw, _ := strings.Cut(u.Opaque[:at], ":")
		out = append(out, pw)
	}
	if o&StreamKey != 0 {
		p := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
		if len(p) > 1 {
			out = append(out, p[1:]...)
		}
	}
	for _, part := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		k, v, eq := strings.Cut(part, "=")
		if dk, err := url.QueryUnescape(k); err == nil && fuzzShownKey(dk) {
			continue
		}
		if !eq {
			v = k // a part without "=" is a value
		}
		out = append(out, v)
		if d, err := url.QueryUnescape(v); err == nil {
			out = append(out, d)
		}
	}
	return out
}

func fuzzShownKey(k string) bool {
	switch k {
	case "streamid", "srt_streamid", "mode", "latency", "rcvlatency", "peerlatency", "transtype",
		"payloadsize", "pkt_size", "pbkeylen", "conntimeo", "peeridletimeo", "rtsp_transport", "transport", "method", "ttl",
		"localaddr", "localport":
		return true
	}
	return false
}

// fuzzShown is every part of u that may be shown, each on a line: a secret found in one of
// them was shown for that part, not for itself.
func fuzzShown(u *url.URL, o Option) string {
	parts := []string{u.Scheme, u.Host, Placeholder, Unparsable}
	if o&NoUser == 0 && u.User != nil {
		parts = append(parts, u.User.Username(), url.User(u.User.Username()).String())
	}
	if o&StreamKey != 0 {
		app, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
		parts = append(parts, app, (&url.URL{Path: app}).EscapedPath())
	} else {
		parts = append(parts, u.Path, u.EscapedPath())
	}
	if at := strings.LastIndex(u.Opaque, "@"); at >= 0 {
		name, _, _ := strings.Cut(u.Opaque[:at], ":")
		parts = append(parts, name, u.Opaque[at+1:])
	} else {
		parts = append(parts, u.Opaque)
	}
	for _, part := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		k, _, eq := strings.Cut(part, "=")
		if dk, err := url.QueryUnescape(k); err == nil && fuzzShownKey(dk) {
			parts = append(parts, part)
		} else if eq {
			parts = append(parts, k)
		}
	}
	return strings.Join(parts, "\n")
}
