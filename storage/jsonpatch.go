package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is a top-level member of a JSON object: its name and its encoded value.
type member struct {
	name  string
	value []byte
}

// setMembers returns doc, a JSON object, with the value of each member of set replaced where doc
// has it and the member appended where it has not; every other byte of doc stays as it was (key
// order, spacing), as SQLite's json_set would leave a compact document. It is the one code path of
// SetActive on both backends.
func setMembers(doc []byte, set []member) ([]byte, error) {
	type span struct{ start, end int64 }
	found := make(map[string]span, len(set))
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("document is not a JSON object")
	}
	members := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("document: %w", err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("document member %q: %w", name, err)
		}
		end := dec.InputOffset()
		found[name] = span{end - int64(len(raw)), end}
		members++
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, errors.New("document is not one JSON object")
	}
	closing := dec.InputOffset() - 1 // the closing brace
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("document has more than one JSON object")
	}
	type edit struct {
		span
		text []byte
	}
	var edits []edit
	var appended []byte
	for _, m := range set {
		if sp, ok := found[m.name]; ok {
			edits = append(edits, edit{sp, m.value})
			continue
		}
		key, _ := json.Marshal(m.name)
		if members > 0 || len(appended) > 0 {
			appended = append(appended, ',')
		}
		appended = append(append(append(appended, key...), ':'), m.value...)
	}
	edits = append(edits, edit{span{closing, closing}, appended})
	out := make([]byte, 0, len(doc)+len(appended)+32)
	var at int64
	for len(edits) > 0 {
		// the next edit in document order
		i := 0
		for j := range edits {
			if edits[j].start < edits[i].start {
				i = j
			}
		}
		e := edits[i]
		edits = append(edits[:i], edits[i+1:]...)
		out = append(append(out, doc[at:e.start]...), e.text...)
		at = e.end
	}
	return append(out, doc[at:]...), nil
}
