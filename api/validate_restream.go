package api

import (
	"github.com/sluicemedia/sluice/internal/kinds"
	"github.com/sluicemedia/sluice/storage"
)

// validateRestream reads a restreaming process record (spec 2.5). Input and output may come as
// one-element arrays, as reads return them. restream_type is derived; a client's value is ignored.
func validateRestream(f *fields) *storage.Restream {
	var r storage.Restream
	r.Active = f.boolean("active", true)
	r.RestreamName = f.name("restream_name")
	if in := f.object("input", true, true); in != nil {
		id := keepID(in)
		r.Input = validateInput(in)
		r.Input.ID = id
	}
	if out := f.object("output", true, true); out != nil {
		id := keepID(out)
		r.Output = validateOutput(out)
		r.Output.ID = id
	}
	if t := f.object("transcoding", false, false); t != nil {
		r.Transcoding = validateTranscoding(t)
	}
	f.used["restream_type"] = true
	r.RestreamType = restreamType(r.Input.InputType, r.Output.OutputType)
	f.done()
	return &r
}

// restreamType derives RESTREAM_TYPE_<IN>_TO_<OUT> from the protocol words of the types
// (API.md "restream_type").
func restreamType(inputType, outputType string) string {
	in, okIn := kinds.InputOf(inputType)
	out, okOut := kinds.OutputOf(outputType)
	if !okIn || !okOut {
		return ""
	}
	return "RESTREAM_TYPE_" + in.Word + "_TO_" + out.Word
}

// keepID returns the id an input or output object carries (as read back from getById), or a new
// one, so that an update that leaves the object alone keeps its id.
func keepID(f *fields) string {
	f.used["id"] = true
	if id, ok := f.m["id"].(string); ok && storage.ValidID(id) {
		return id
	}
	return storage.NewID()
}
