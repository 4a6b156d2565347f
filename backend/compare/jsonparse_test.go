package compare

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

func stdDecode(data []byte) (any, error) {
	if !json.Valid(data) {
		return nil, &jsonError{0, "invalid"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

var jsonSeeds = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `"a\"b\\c\/d\b\f\n\r\t"`,
	`"\u00e9\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `{"a":[1,{"b":null}],"c":"é"}`, ` [1 , 2 ] `,
	`{"a":1,"a":2}`, `[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `1e`, `"\x01"`, `"abc`, `[`, `{"a"}`, `tru`, `[1] [2]`,
}

func TestParseJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		checkAgainstStd(t, []byte(s))
	}
}

// TestParseJSONDepth: nesting is bounded as evidence.Parse bounds it, at
// the limit and one past it. (Duplicates and unpaired surrogates are
// encoding/json's business here, which TestParseJSONAgreesWithEncodingJSON
// checks; trace specs, which must refuse them, are read by strictjson.)
func TestParseJSONDepth(t *testing.T) {
	deep := bytes.Repeat([]byte("["), maxJSONDepth+1)
	if _, err := parseJSON(string(deep)); err == nil {
		t.Error("accepted nesting beyond the limit")
	}
	ok := append(bytes.Repeat([]byte("["), maxJSONDepth), bytes.Repeat([]byte("]"), maxJSONDepth)...)
	if _, err := parseJSON(string(ok)); err != nil {
		t.Errorf("rejected nesting at the limit: %v", err)
	}
}

func checkAgainstStd(t *testing.T, data []byte) {
	t.Helper()
	if !utf8.Valid(data) || bytes.Count(data, []byte("[")) > 400 || bytes.Count(data, []byte("{")) > 400 {
		return // encoding/json rewrites invalid UTF-8 and limits depth differently
	}
	want, werr := stdDecode(data)
	got, gerr := parseJSON(string(data))
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: encoding/json error %v, parseJSON error %v", data, werr, gerr)
	}
	if werr == nil && !reflect.DeepEqual(want, got) {
		t.Fatalf("%q: encoding/json %#v, parseJSON %#v", data, want, got)
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstStd(t, data)
		if v, err := parseJSON(string(data)); err == nil && utf8.Valid(data) {
			again, err := parseJSON(string(rawJSON(v)))
			if err != nil || !equalJSON(v, again) || canonKey(v, nil) != canonKey(again, nil) {
				t.Fatalf("%q does not survive a round trip: %v", data, err)
			}
		}
	})
}
