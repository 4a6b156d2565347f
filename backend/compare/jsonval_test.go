package compare

import (
	"encoding/json"
	"testing"
)

func TestCanonKeyAndEqualAgree(t *testing.T) {
	same := [][2]string{
		{`1000000`, `1e6`}, {`1000000`, `1000000.0`}, {`-0`, `0`}, {`1.5`, `15e-1`}, {`123456789012345`, `1.23456789012345e14`},
		{`1e15`, `1000000000000000`}, {`-7`, `-7.0`}, {`{"a":1,"b":[true,null,"x"]}`, `{"b":[true,null,"x"],"a":1.0}`},
		{`"\u00e9"`, `"é"`},
	}
	differ := [][2]string{
		{`1`, `"1"`}, {`[1,2]`, `[2,1]`}, {`{"a":1}`, `{"a":1,"b":null}`}, {`"a"`, `"a "`}, {`{"ab":"c"}`, `{"a":"bc"}`},
		{`["a","b"]`, `["a,b"]`}, {`null`, `false`}, {`0.1`, `0.10000000000000002`}, {`{}`, `[]`},
	}
	dec := func(s string) any {
		v, err := decodeJSON(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	for _, p := range same {
		a, b := dec(p[0]), dec(p[1])
		if !equalJSON(a, b) || canonKey(a, nil) != canonKey(b, nil) {
			t.Errorf("%s and %s should be the same value", p[0], p[1])
		}
	}
	for _, p := range differ {
		a, b := dec(p[0]), dec(p[1])
		if equalJSON(a, b) || canonKey(a, nil) == canonKey(b, nil) {
			t.Errorf("%s and %s should differ", p[0], p[1])
		}
	}
	skip := map[string]bool{"at_ms": true}
	if canonKey(dec(`{"at_ms":1,"d":"x"}`), skip) != canonKey(dec(`{"d":"x"}`), nil) {
		t.Error("skipped member still counts")
	}
	if integerOK(json.Number("9007199254740993")) || !integerOK(json.Number("9007199254740992")) || !integerOK(json.Number("5.0")) || integerOK(json.Number("5.5")) {
		t.Error("integer bounds")
	}
}

func integerOK(n json.Number) bool { _, ok := integer(n); return ok }
