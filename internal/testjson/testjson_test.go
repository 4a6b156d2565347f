package testjson

import (
	"encoding/json"
	"testing"
)

// Object keeps number literals as they were, so a decoded and re-encoded
// tree is the same bytes; Marshal is json.Marshal.
func TestObjectKeepsNumbers(t *testing.T) {
	doc := []byte(`{"a":1.50,"b":[10000000000000000001,-0],"c":"x"}`)
	m := Object(t, doc)
	if n, ok := m["a"].(json.Number); !ok || n.String() != "1.50" {
		t.Fatalf("a = %#v", m["a"])
	}
	if got := string(Marshal(t, m)); got != string(doc) {
		t.Fatalf("re-encoded %s, want %s", got, doc)
	}
}
