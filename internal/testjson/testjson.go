// Package testjson encodes the values tests build their JSON inputs from
// and decodes JSON trees that tests mutate, failing the test on an error.
// It is used only by tests (app, backend/capture, backend/replay); it
// holds no state.
package testjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Marshal is json.Marshal of v; an error ends the test.
func Marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Object decodes the JSON object b with its numbers as json.Number, so
// that re-encoding a mutated tree writes every untouched number exactly as
// it was; anything else than one object ends the test.
func Object(t testing.TB, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}
