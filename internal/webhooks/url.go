package webhooks

import (
	"errors"
	"net/url"

	"github.com/sluicemedia/sluice/internal/redact"
)

// shown is a webhook URL as logs and last_error show it: redact.URL's rule, the user name
// dropped too (as before: a webhook's user information is a credential whole).
func shown(raw string) string { return redact.URL(raw, redact.NoUser) }

// unwrapURL drops net/http's *url.Error wrapper, whose message repeats the full URL, and hides
// what else of raw's secrets err's text may hold.
func unwrapURL(err error, raw string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return redact.Error(err, raw, redact.NoUser)
}
