package evidence_test

import (
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

func ExampleDigest() {
	d, err := evidence.Digest(map[string]any{"paths": true, "pids": true, "ports": true, "time_bucket_ms": 10, "patterns": []any{}})
	if err != nil {
		panic(err)
	}
	fmt.Println(d)
	// Output: 60a27b2d1ee5aa73bf2e5cb2deaed2e9cc548f961ad2e3772c981828b643cc43
}

func ExampleCanonicalize() {
	out, err := evidence.Canonicalize([]byte(`{"b": -0, "a": [1E21, 0.10, "\u003c&"], "😀": 1, "ﬁ": 2}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output: {"a":[1e+21,0.1,"<&"],"b":0,"😀":1,"ﬁ":2}
}

func ExampleParse() {
	e := &evidence.Envelope{
		Provider:         evidence.Provider{ID: "example", Name: "Example", Version: "1"},
		PredicateType:    "example.note/v1",
		Operation:        "note",
		Parameters:       json.RawMessage(`{}`),
		NormalizedResult: json.RawMessage(`{"ok":true}`),
		Confidence:       evidence.Inferred,
		Authority:        evidence.AuthorityAnalystInference,
	}
	if err := evidence.Seal(e); err != nil {
		panic(err)
	}
	data, _ := json.Marshal(e)
	got, issues := evidence.Parse(data)
	fmt.Println(got.EvidenceID == e.EvidenceID, len(issues))

	tampered := []byte(string(data[:len(data)-1]) + `,"extra":1}`)
	_, issues = evidence.Parse(tampered)
	fmt.Println(issues[0])
	// Output:
	// true 0
	// unknown_field at $.extra: not an Evidence v2 envelope field
}
