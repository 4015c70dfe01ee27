package api

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sluicemedia/sluice/storage"
)

// vctx is shared by the objects of one validation: the first error found and the unknown
// fields seen, with the store for existence checks of referenced records.
type vctx struct {
	ctx     context.Context
	store   Store
	err     *apiError
	unknown []string
	// internal is a store failure met while checking a reference; it is answered 500.
	internal error
	// inputs is the server's policy for INPUT_TYPE_OTHER addresses; nil is the default policy.
	inputs *InputPolicy
	// urlChecks check protocol options in stream addresses, by scheme; nil checks none.
	urlChecks map[string]func(string, bool) error
}

// fields reads typed values out of one decoded JSON object. The first error sticks: once a
// field fails, every later read returns a zero value and the validation reports that field.
type fields struct {
	vc   *vctx
	m    map[string]any
	path string
	used map[string]bool
	// partial relaxes "is required" for this object's own fields (an update body before merge).
	partial bool
}

func newFields(ctx context.Context, store Store, m map[string]any) *fields {
	return &fields{vc: &vctx{ctx: ctx, store: store}, m: m, used: map[string]bool{}}
}

func (f *fields) child(key string, m map[string]any) *fields {
	return &fields{vc: f.vc, m: m, path: f.at(key), used: map[string]bool{}}
}

// at is the JSON path of key in this object.
func (f *fields) at(key string) string {
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

func (f *fields) ok() bool { return f.vc.err == nil }

// err returns the first validation error, or nil.
func (f *fields) err() error {
	switch {
	case f.vc.internal != nil:
		return f.vc.internal
	case f.vc.err != nil:
		return f.vc.err
	}
	return nil
}

func (f *fields) fail(key, format string, args ...any) {
	if f.vc.err == nil {
		// The message is a sentence that names the field: "vod_port must be at most 65535".
		path := f.at(key)
		f.vc.err = errValidation(path, "%s "+format, append([]any{path}, args...)...)
	}
}

// done records the keys of this object nobody read; they are ignored and logged at debug level.
func (f *fields) done() {
	for k := range f.m {
		if !f.used[k] {
			f.vc.unknown = append(f.vc.unknown, f.at(k))
		}
	}
}

// alias makes alias an accepted spelling of key; errors still name key.
func (f *fields) alias(key, alias string) {
	if v, ok := f.m[alias]; ok {
		f.used[alias] = true
		if cur, has := f.m[key]; !has || cur == nil {
			f.m[key] = v
		}
	}
}

// get returns the raw value of key; null and absent are the same.
func (f *fields) get(key string, req bool) (any, bool) {
	f.used[key] = true
	if !f.ok() {
		return nil, false
	}
	v, ok := f.m[key]
	if !ok || v == nil {
		if req && !f.partial {
			f.fail(key, "is required")
		}
		return nil, false
	}
	return v, true
}

func (f *fields) str(key string, req bool) (string, bool) {
	v, ok := f.get(key, req)
	if !ok {
		return "", false
	}
	s, isStr := v.(string)
	if !isStr {
		f.fail(key, "must be a string")
		return "", false
	}
	return s, true
}

// text is a string without control characters of at most maxLen bytes; empty counts as absent.
func (f *fields) text(key string, req bool, maxLen int) (string, bool) {
	s, ok := f.str(key, req)
	if !ok || f.blank(key, s, req, "must not be empty") {
		return "", false
	}
	if len(s) > maxLen {
		f.fail(key, "must be at most %d characters", maxLen)
		return "", false
	}
	if hasControl(s) {
		f.fail(key, "must not contain control characters")
		return "", false
	}
	return s, true
}

// blank reports whether the value s of key is empty, which counts as absent: a required key
// fails with missing.
func (f *fields) blank(key, s string, req bool, missing string) bool {
	if s != "" {
		return false
	}
	if req && !f.partial {
		f.fail(key, "%s", missing)
	}
	return true
}

// name is a required unique name: trimmed, 1..128 characters, no control characters.
func (f *fields) name(key string) string {
	s, ok := f.str(key, true)
	if !ok {
		return ""
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		f.fail(key, "must not be empty")
	case len([]rune(s)) > 128:
		f.fail(key, "must be at most 128 characters")
	case hasControl(s):
		f.fail(key, "must not contain control characters")
	default:
		return s
	}
	return ""
}

// enum is one of values; an empty string counts as absent.
func (f *fields) enum(key string, req bool, values ...string) (string, bool) {
	s, ok := f.str(key, req)
	if !ok || f.blank(key, s, req, "is required") {
		return "", false
	}
	if !slices.Contains(values, s) {
		f.fail(key, "must be one of %s", strings.Join(values, ", "))
		return "", false
	}
	return s, true
}

func (f *fields) boolean(key string, def bool) bool {
	v, ok := f.get(key, false)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		f.fail(key, "must be a boolean (true or false)")
		return def
	}
	return b
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// numberLiteral is the literal of a JSON number, or a string trimmed; ok is false for any
// other value.
func numberLiteral(v any) (lit string, ok bool) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), true
	case string:
		return strings.TrimSpace(x), true
	}
	return "", false
}

// numeric returns a JSON number or a numeric string as its literal; "" counts as absent.
func (f *fields) numeric(key string, req bool) (string, bool) {
	v, ok := f.get(key, req)
	if !ok {
		return "", false
	}
	lit, ok := numberLiteral(v)
	if !ok {
		f.fail(key, "must be a number")
		return "", false
	}
	if f.blank(key, lit, req, "is required") {
		return "", false
	}
	if !jsonNumber.MatchString(lit) {
		f.fail(key, "must be a number")
		return "", false
	}
	return lit, true
}

// number is a finite number in [lo, hi]; gtLo makes the lower bound exclusive.
func (f *fields) number(key string, req bool, lo, hi float64, gtLo bool) (float64, bool) {
	lit, ok := f.numeric(key, req)
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		f.fail(key, "must be a finite number")
		return 0, false
	}
	if x > hi || x < lo || (gtLo && x == lo) {
		if gtLo {
			f.fail(key, "must be greater than %s and at most %s", fmtNum(lo), fmtNum(hi))
		} else {
			f.fail(key, "must be from %s to %s", fmtNum(lo), fmtNum(hi))
		}
		return 0, false
	}
	return x, true
}

// integer is a whole number in [lo, hi].
func (f *fields) integer(key string, req bool, lo, hi int64) (int64, bool) {
	lit, ok := f.numeric(key, req)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		x, ferr := strconv.ParseFloat(lit, 64)
		switch {
		case ferr == nil && x == math.Trunc(x) && math.Abs(x) < 1<<53:
			n = int64(x)
		case ferr == nil && x == math.Trunc(x), errors.Is(err, strconv.ErrRange):
			f.fail(key, "must be from %d to %d", lo, hi)
			return 0, false
		default:
			f.fail(key, "must be an integer")
			return 0, false
		}
	}
	if n < lo || n > hi {
		f.fail(key, "must be from %d to %d", lo, hi)
		return 0, false
	}
	return n, true
}

func (f *fields) intIn(key string, req bool, lo, hi int) (int, bool) {
	n, ok := f.integer(key, req, int64(lo), int64(hi))
	return int(n), ok
}

// intDefault is an optional integer in [lo, hi] that is def when absent.
func (f *fields) intDefault(key string, lo, hi, def int) int {
	if n, ok := f.intIn(key, false, lo, hi); ok {
		return n
	}
	return def
}

// optInt is an optional integer kept as a pointer (nil when absent).
func (f *fields) optInt(key string, lo, hi int) *int {
	if n, ok := f.intIn(key, false, lo, hi); ok {
		return &n
	}
	return nil
}

// object returns the object at key, or nil. With one, a one-element array holding an object
// is accepted too (reads return restream inputs and outputs as arrays).
func (f *fields) object(key string, req, one bool) *fields {
	v, ok := f.get(key, req)
	if !ok {
		return nil
	}
	if arr, isArr := v.([]any); isArr && one {
		if len(arr) != 1 {
			f.fail(key, "must be an object or an array of exactly one object")
			return nil
		}
		v = arr[0]
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		f.fail(key, "must be an object")
		return nil
	}
	return f.child(key, m)
}

// objectID is an ObjectId: 24 hexadecimal digits.
func (f *fields) objectID(key string, req bool) (string, bool) {
	s, ok := f.str(key, req)
	if !ok {
		return "", false
	}
	if s == "" && req && !f.partial {
		f.fail(key, "is required")
		return "", false
	}
	if !storage.ValidID(s) {
		f.fail(key, "must be an ObjectId (24 hexadecimal digits)")
		return "", false
	}
	return s, true
}

// requireID reads the id of the record a request addresses; _id is accepted for id.
func (f *fields) requireID() string {
	f.alias("id", "_id")
	id, _ := f.objectID("id", true)
	return id
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
