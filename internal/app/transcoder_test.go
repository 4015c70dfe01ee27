package app

import (
	"reflect"
	"testing"

	"github.com/sluicemedia/sluice/storage"
	"github.com/sluicemedia/sluice/transcode"
)

// TestTranscodeSettings: every field of the record's transcoding object reaches transcode's
// Settings with its value, and the two types have the same fields, so that a field added to one
// and not the other fails here rather than being dropped on the way.
func TestTranscodeSettings(t *testing.T) {
	rt, st := reflect.TypeFor[storage.Transcoding](), reflect.TypeFor[transcode.Settings]()
	if rt.NumField() != st.NumField() {
		t.Fatalf("storage.Transcoding has %d fields, transcode.Settings %d", rt.NumField(), st.NumField())
	}
	rec := &storage.Transcoding{}
	rv := reflect.ValueOf(rec).Elem()
	for i := range rt.NumField() {
		f := rt.Field(i)
		sf, ok := st.FieldByName(f.Name)
		if !ok || sf.Type != f.Type {
			t.Fatalf("field %s %v has no match in transcode.Settings (%v)", f.Name, f.Type, sf.Type)
		}
		// A distinct value per field: pointers to i+1, strings naming the field.
		v := rv.Field(i)
		switch f.Type.Kind() {
		case reflect.String:
			v.SetString(f.Name)
		case reflect.Pointer:
			p := reflect.New(f.Type.Elem())
			p.Elem().Set(reflect.ValueOf(i + 1).Convert(f.Type.Elem()))
			v.Set(p)
		case reflect.Interface:
			v.Set(reflect.ValueOf(float64(i + 1)))
		default:
			t.Fatalf("field %s: kind %v not covered by this test", f.Name, f.Type.Kind())
		}
	}
	got := reflect.ValueOf(transcodeSettings(rec)).Elem()
	for i := range rt.NumField() {
		name := rt.Field(i).Name
		if want, have := rv.Field(i).Interface(), got.FieldByName(name).Interface(); !reflect.DeepEqual(want, have) {
			t.Errorf("%s: record %v, settings %v", name, want, have)
		}
	}
	if transcodeSettings(nil) != nil {
		t.Error("a nil transcoding object must stay nil (passthrough)")
	}
}
