package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The three vectors of docs/formats/capture-record.md "Commitments".
const (
	digestEmptyObject   = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
	digestEmptyArray    = "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
	digestNormalization = "60a27b2d1ee5aa73bf2e5cb2deaed2e9cc548f961ad2e3772c981828b643cc43"
)

func TestSpecDigests(t *testing.T) {
	type normalization struct {
		Paths        bool  `json:"paths"`
		PIDs         bool  `json:"pids"`
		Ports        bool  `json:"ports"`
		TimeBucketMS int   `json:"time_bucket_ms"`
		Patterns     []any `json:"patterns"`
	}
	values := []struct {
		name string
		v    any
		want string
	}{
		{"empty object map", map[string]any{}, digestEmptyObject},
		{"empty struct", struct{}{}, digestEmptyObject},
		{"empty array", []any{}, digestEmptyArray},
		{"normalization map", map[string]any{"paths": true, "pids": true, "ports": true, "time_bucket_ms": 10, "patterns": []any{}}, digestNormalization},
		{"normalization struct", normalization{true, true, true, 10, []any{}}, digestNormalization},
	}
	for _, c := range values {
		got, err := Digest(c.v)
		if err != nil || got != c.want {
			t.Errorf("Digest(%s) = %s, %v; want %s", c.name, got, err, c.want)
		}
	}
	raws := []struct{ raw, want string }{
		{`{}`, digestEmptyObject},
		{" { } \n", digestEmptyObject},
		{`[]`, digestEmptyArray},
		{`{"paths":true,"pids":true,"ports":true,"time_bucket_ms":10,"patterns":[]}`, digestNormalization},
		{`{"patterns":[],"time_bucket_ms":1.0e1,"ports":true,"pids":true,"paths":true}`, digestNormalization},
	}
	for _, c := range raws {
		got, err := DigestJSON([]byte(c.raw))
		if err != nil || got != c.want {
			t.Errorf("DigestJSON(%s) = %s, %v; want %s", c.raw, got, err, c.want)
		}
	}
	canon, err := Canonicalize([]byte(`{"paths":true,"pids":true,"ports":true,"time_bucket_ms":10,"patterns":[]}`))
	if want := `{"paths":true,"patterns":[],"pids":true,"ports":true,"time_bucket_ms":10}`; err != nil || string(canon) != want {
		t.Errorf("Canonicalize = %s, %v; want %s", canon, err, want)
	}
}

// checkVectors canonicalizes every input/NAME.json under dir and compares it
// with output/NAME.json and, where present, outhex/NAME.txt.
func checkVectors(t *testing.T, dir string) {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join(dir, "input", "*.json"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no test vectors in %s: %v", dir, err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "output", name+".json"))
			if err != nil {
				t.Fatalf("vector without output: %v", err)
			}
			got, err := Canonicalize(input)
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Canonicalize =\n%s\nwant\n%s", got, want)
			}
			if hx, err := os.ReadFile(filepath.Join(dir, "outhex", name+".txt")); err == nil {
				b, err := hex.DecodeString(strings.Join(strings.Fields(string(hx)), ""))
				if err != nil {
					t.Fatalf("outhex: %v", err)
				}
				if !bytes.Equal(got, b) {
					t.Fatalf("Canonicalize = % x\nwant outhex % x", got, b)
				}
			}
			again, err := Canonicalize(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("not idempotent: %s, %v", again, err)
			}
			d1, err1 := DigestJSON(input)
			sum := sha256.Sum256(want)
			if err1 != nil || d1 != hex.EncodeToString(sum[:]) {
				t.Fatalf("DigestJSON = %s, %v; want sha256 of output", d1, err1)
			}
		})
	}
}

func TestJCSVectors(t *testing.T) { checkVectors(t, filepath.Join("testdata", "jcs")) }

// TestJCSVectorsMatchModule runs the vectors shipped in the module cache copy
// of github.com/gowebpki/jcs and checks that testdata/jcs is identical to
// them, so the committed copy cannot drift from the pinned module version.
func TestJCSVectorsMatchModule(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not available to locate the module cache")
	}
	out, err := exec.Command(goTool, "list", "-m", "-f", "{{.Dir}}", "github.com/gowebpki/jcs").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("github.com/gowebpki/jcs not in the module cache: %v", err)
	}
	moduleData := filepath.Join(dir, "testdata")
	checkVectors(t, moduleData)
	for _, sub := range []string{"input", "output", "outhex"} {
		files, _ := filepath.Glob(filepath.Join(moduleData, sub, "*"))
		ours, _ := filepath.Glob(filepath.Join("testdata", "jcs", sub, "*"))
		if len(files) != len(ours) {
			t.Errorf("%s: module has %d files, testdata/jcs has %d", sub, len(files), len(ours))
		}
		for _, f := range files {
			a, _ := os.ReadFile(f)
			b, err := os.ReadFile(filepath.Join("testdata", "jcs", sub, filepath.Base(f)))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("testdata/jcs/%s/%s differs from the module copy (%v)", sub, filepath.Base(f), err)
			}
		}
	}
}

func TestCanonicalizeRFC8785Forms(t *testing.T) {
	cases := []struct{ name, in, want string }{
		// UTF-16 order puts U+1F600 (D83D DE00) before U+FB01; UTF-8 and
		// code point order (encoding/json's map order) put it after.
		{"non-BMP key order", `{"ﬁ":1,"😀":2,"a":3}`, `{"a":3,"😀":2,"ﬁ":1}`},
		{"escaped non-BMP key", `{"\ufb01":1,"\ud83d\ude00":2}`, `{"😀":2,"ﬁ":1}`},
		{"html characters stay literal", `{"s":"\u003c/a\u003e \u0026 <b>"}`, `{"s":"</a> & <b>"}`},
		{"1e21", `[1e21, 1E21, 1000000000000000000000]`, `[1e+21,1e+21,1e+21]`},
		{"negative zero", `[-0, -0.0, 0e5]`, `[0,0,0]`},
		{"0.1", `[0.1, 0.10, 1e-1, 10e-2]`, `[0.1,0.1,0.1,0.1]`},
		{"small numbers", `[1e-6, 1e-7, 0.000001, 1.5e-7]`, `[0.000001,1e-7,0.000001,1.5e-7]`},
		{"integers", `[1.0, 100, 1e2, 9007199254740991]`, `[1,100,100,9007199254740991]`},
		{"escapes", `"\u000f\n\/\"\\\u00e9\u001F"`, `"\u000f\n/\"\\é\u001f"`},
		{"nested order", `{"b":{"d":1,"c":[{"z":0,"y":1}]},"a":null}`, `{"a":null,"b":{"c":[{"y":1,"z":0}],"d":1}}`},
	}
	for _, c := range cases {
		got, err := Canonicalize([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: Canonicalize(%s) = %s, %v; want %s", c.name, c.in, got, err, c.want)
		}
	}

	// encoding/json alone gets these wrong; Digest must not.
	m := map[string]any{"ﬁ": 1, "😀": 2, "h": "<&>", "z": -0.0, "e": 1e21}
	plain, _ := json.Marshal(m)
	want := `{"e":1e+21,"h":"<&>","z":0,"😀":2,"ﬁ":1}`
	if string(plain) == want {
		t.Fatalf("encoding/json unexpectedly produced canonical JSON %s", plain)
	}
	got, err := Digest(m)
	sum := sha256.Sum256([]byte(want))
	if err != nil || got != hex.EncodeToString(sum[:]) {
		t.Errorf("Digest(%v) = %s, %v; want sha256(%s)", m, got, err, want)
	}
}

func TestKeyOrderNeverChangesDigest(t *testing.T) {
	orders := []string{
		`{"a":1,"b":{"x":[1,{"q":true,"p":false}],"y":"s"},"c":null,"😀":0,"ﬁ":0}`,
		`{"ﬁ":0,"😀":0,"c":null,"b":{"y":"s","x":[1,{"p":false,"q":true}]},"a":1}`,
		"{ \"b\" : { \"y\" : \"s\" , \"x\" : [ 1 , { \"q\" : true , \"p\" : false } ] } ,\n\t\"😀\":0, \"a\" : 1 , \"ﬁ\":0, \"c\" : null }",
	}
	first, err := DigestJSON([]byte(orders[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range orders[1:] {
		if d, err := DigestJSON([]byte(o)); err != nil || d != first {
			t.Errorf("DigestJSON(%s) = %s, %v; want %s", o, d, err, first)
		}
	}
	// Array order is significant.
	if d, _ := DigestJSON([]byte(`[1,2]`)); d == mustDigestJSON(t, `[2,1]`) {
		t.Error("array order did not change the digest")
	}
}

func mustDigestJSON(t *testing.T, s string) string {
	t.Helper()
	d, err := DigestJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCanonicalizeRejects(t *testing.T) {
	bad := []string{
		``, ` `, `{`, `{"a":1,}`, `[1,]`, `{} {}`, `{}x`, `nul`, `NaN`, `[Infinity]`, `01`, `+1`, `.5`, `1.`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `["\ud800"]`, `["\udc00\ud800"]`, `["\ud800x"]`,
		"[\"\xff\"]", "\"\xed\xa0\x80\"", `[1e400]`, `[-1e400]`, "\"tab\there\"",
	}
	for _, b := range bad {
		if out, err := Canonicalize([]byte(b)); err == nil {
			t.Errorf("Canonicalize(%q) = %s; want an error", b, out)
		} else if !strings.HasPrefix(err.Error(), "evidence: canonicalize JSON") {
			t.Errorf("error without context: %v", err)
		}
		if _, err := DigestJSON([]byte(b)); err == nil {
			t.Errorf("DigestJSON(%q) succeeded", b)
		}
	}
	if _, err := Canonicalize(nil); err == nil {
		t.Error("Canonicalize(nil) succeeded")
	}
	if _, err := Digest(make(chan int)); err == nil || !strings.Contains(err.Error(), "chan int") {
		t.Errorf("Digest(chan) = %v; want an encoding error naming the type", err)
	}
}
