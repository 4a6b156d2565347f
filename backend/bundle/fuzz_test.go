package bundle

import (
	"testing"
)

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs"],"inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"null"},"timeoutMs":5000,"maxOutputBytes":65536}`))
	f.Add([]byte(`{"schemaVersion":2,"__proto__":1}`))
	f.Add([]byte(`[[[[[[[`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, is, _ := ParseManifest(data)
		if len(is) > MaxIssues {
			t.Fatalf("%d issues", len(is))
		}
		if (m == nil) == (len(is) == 0) {
			t.Fatalf("manifest %v with issues %v", m, is)
		}
		for _, i := range is {
			if i.Code == "" || i.Path == "" || i.Path[0] != '$' {
				t.Fatalf("issue without code or path: %+v", i)
			}
		}
		if m != nil {
			if m.TimeoutMs < MinTimeoutMs || m.TimeoutMs > MaxTimeoutMs || m.MaxOutputBytes < 1 || m.MaxOutputBytes > MaxOutputBytesLimit || len(m.Files) > MaxFiles {
				t.Fatalf("accepted out-of-range manifest %+v", m)
			}
		}
	})
}

func FuzzCheckSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}]}},"required":["a"]}`))
	f.Add([]byte(`{"type":"array","items":{"type":"integer","minimum":1,"maximum":0}}`))
	f.Add([]byte(`{"$ref":"#","properties":{"__proto__":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, iss := ParseJSON(data)
		if iss != nil {
			return
		}
		is := CheckSchema(v, "$", true)
		if len(is) > MaxIssues {
			t.Fatalf("%d issues", len(is))
		}
		s, cis := CompileSchema(v, true)
		if (s == nil) == (len(cis) == 0) {
			t.Fatalf("schema %v with issues %v", s, cis)
		}
		if len(is) == 0 && s == nil {
			t.Fatalf("subset admitted a schema the validator cannot compile: %v", cis)
		}
	})
}

func FuzzValidateInvocation(f *testing.F) {
	f.Add([]byte(`{"name":"ab","count":3,"tags":["x"],"mode":"a","either":null}`))
	f.Add([]byte(`{"name":NaN}`))
	f.Add([]byte(`{"name":"ab"} 1`))
	s := compile(f, factSchema, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, is := ValidateInvocation(s, data)
		if len(is) > MaxIssues || (v == nil) == (len(is) == 0) {
			t.Fatalf("value %v issues %v", v, is)
		}
		if v != nil && v.Kind != Object {
			t.Fatal("accepted a non-object invocation")
		}
	})
}

func FuzzValidateResult(f *testing.F) {
	f.Add([]byte(`{"ok":true}`), 100)
	f.Add([]byte(`{"ok":true}{"ok":true}`), 100)
	f.Add([]byte(`{"ok":true}`), 3)
	s := compile(f, `{"anyOf":[{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]},{"type":"array","items":{"type":"number"}}]}`, false)
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit < 1 || limit > MaxOutputBytesLimit {
			return
		}
		v, is := ValidateResult(s, data, limit)
		if len(is) > MaxIssues || (v == nil) == (len(is) == 0) {
			t.Fatalf("value %v issues %v", v, is)
		}
		if v != nil && len(data) > limit {
			t.Fatal("accepted output past the limit")
		}
	})
}
