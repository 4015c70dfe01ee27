package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

var pathParam = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

// openAPIPath turns a chi pattern into an OpenAPI path: a trailing /* becomes /{path}.
func openAPIPath(pattern string) string {
	if p, ok := strings.CutSuffix(pattern, "/*"); ok {
		return p + "/{path}"
	}
	return pattern
}

// openAPIDoc builds the OpenAPI 3.1 document from the route table.
func (s *server) openAPIDoc() map[string]any {
	paths := map[string]any{}
	schemas := sharedSchemas()
	for _, m := range modules() {
		schemas[componentName(m)] = m.schema
	}
	for _, rt := range s.routes {
		p := openAPIPath(rt.pattern)
		item, _ := paths[p].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[p] = item
		}
		item[strings.ToLower(rt.method)] = operation(rt, p)
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "sluice API", "version": "1",
			"description": "Players (VoD/OTT), restreams, recordings, SRT/RTMP server modules and utilities. See API.md."},
		"paths": paths,
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{
				"accessToken": map[string]any{"type": "apiKey", "in": "header", "name": "x-access-token"},
				"bearer":      map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
				"queryToken":  map[string]any{"type": "apiKey", "in": "query", "name": "token"},
			},
		},
	}
}

func operation(rt route, path string) map[string]any {
	op := map[string]any{
		"operationId": strings.ToLower(rt.method) + strings.NewReplacer("/", "_", "{", "", "}", "", "-", "_").Replace(path),
		"summary":     rt.summary,
		"tags":        []string{rt.tag},
	}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
	}
	params = append(params, rt.query...)
	if len(params) > 0 {
		op["parameters"] = params
	}
	switch rt.auth {
	case authNone:
		op["security"] = []any{}
	case authToken:
		op["security"] = []any{map[string]any{"accessToken": []string{}}, map[string]any{"bearer": []string{}}}
	case authTokenOrQuery:
		op["security"] = []any{map[string]any{"accessToken": []string{}}, map[string]any{"bearer": []string{}},
			map[string]any{"queryToken": []string{}}}
	}
	if rt.body != nil {
		op["requestBody"] = map[string]any{
			"required": strings.HasSuffix(rt.pattern, "/create") || strings.HasSuffix(rt.pattern, "/update"),
			"content":  map[string]any{"application/json": map[string]any{"schema": rt.body}},
		}
	}
	status := rt.status
	if status == 0 {
		status = http.StatusOK
	}
	ok := map[string]any{"description": http.StatusText(status)}
	if rt.resp != nil {
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": rt.resp}}
	}
	errBody := map[string]any{"application/json": map[string]any{"schema": jsRef("Error")}}
	responses := map[string]any{
		strconv.Itoa(status): ok,
		"default":            map[string]any{"description": "an error (API.md)", "content": errBody},
	}
	for _, code := range rt.errs {
		responses[strconv.Itoa(code)] = map[string]any{"description": errorStatusText[code], "content": errBody}
	}
	op["responses"] = responses
	return op
}

// errorStatusText describes the error statuses routes name in the document; each route's
// summary says when it answers them.
var errorStatusText = map[int]string{
	http.StatusUnauthorized:        CodeUnauthorized + ": the token is missing or not accepted",
	http.StatusNotFound:            CodeNotFound + ": no such record, or the feature is off on this server",
	http.StatusConflict:            "a conflict (" + CodeNameTaken + ", " + CodePortTaken + " or " + CodeNodeRunning + "); the message says which",
	http.StatusTooManyRequests:     CodeRateLimited + ": too many failed logins from this address or for this user name; see Retry-After",
	http.StatusServiceUnavailable:  CodeUnavailable + ": not available now (the message says why); see Retry-After when given",
	http.StatusInsufficientStorage: CodeInsufficientStorage + ": no space left to store the change (disk full, quota or file-size limit)",
}

func (s *server) openAPI(w http.ResponseWriter, r *http.Request) {
	s.openAPIOnce.Do(func() { s.openAPIJSON, s.openAPIErr = json.Marshal(s.openAPIDoc()) })
	if s.openAPIErr != nil {
		s.fail(w, r, s.openAPIErr)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(s.openAPIJSON)
}
