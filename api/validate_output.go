package api

import (
	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

// validateOutput reads a restream output object (spec 2.3).
func validateOutput(f *fields) storage.Output {
	var out storage.Output
	typ, _ := f.enum("output_type", true, kinds.OutputTypes()...)
	out.OutputType = typ
	if kind, ok := kinds.OutputOf(typ); ok {
		out.OutputStreamURL = streamURL(f, "output_stream_url", true, kind.Schemes, kind.NeedsHost, false)
	}
	out.OutputStreamKey, _ = f.text("output_stream_key", false, 1024)
	f.done()
	return out
}
