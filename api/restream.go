package api

import (
	"net/http"

	"github.com/sluicemedia/sluice/storage"
)

// restreamModule serves /api/restream: restreaming processes (spec 4.2).
func restreamModule() *module {
	m := newModule(runsProcess, "restream", "restream", validateRestream, restreamSchema())
	m.decorate = readHook{add: decorateRestream, keys: []string{"input", "output"}}
	return m
}

// decorateRestream returns input and output as one-element arrays of objects with their ids
// (spec 2.5).
func decorateRestream(_ *server, _ *http.Request, _ storage.Record, doc map[string]any) error {
	doc["input"] = []any{doc["input"]}
	doc["output"] = []any{doc["output"]}
	return nil
}

func restreamSchema() map[string]any {
	return jsObject([]string{"restream_name", "input", "output"}, map[string]any{
		"restream_name": jsString(1, 128),
		"input":         jsOneOrArray(jsRef("Input")),
		"output":        jsOneOrArray(jsRef("Output")),
		"transcoding":   jsRef("Transcoding"),
		"active":        jsBool(true),
	})
}
