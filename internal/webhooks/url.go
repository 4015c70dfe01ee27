package webhooks

import (
	"errors"
	"net/url"
)

// redact is a webhook URL without its user information or query (which may hold secrets),
// for logs and last_error.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(the webhook URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}

// unwrapURL drops net/http's *url.Error wrapper, whose message repeats the full URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
