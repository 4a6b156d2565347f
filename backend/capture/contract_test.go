package capture

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// seedScenario is the representative scenario of the seed document.
const seedScenario = `{
  "approved": true,
  "executable": "/absolute/path/to/node",
  "arguments": ["./signup.mjs"],
  "working_directory": "/absolute/project",
  "filesystem_roots": ["/absolute/project/state"],
  "terminal": { "columns": 80, "rows": 24, "scrollback": 1000 },
  "events": [
    { "type": "input", "at_ms": 250, "data": "user@example.test\r", "sensitive": true },
    { "type": "resize", "at_ms": 500, "columns": 100, "rows": 30 }
  ],
  "checkpoints": [
    { "name": "signup_ready", "trigger": { "type": "terminal_literal", "value": "All set!" } },
    { "name": "root_exited", "trigger": { "type": "root_exit" } }
  ],
  "command_shims": [
    { "name": "codex", "routes": [ {
          "arguments": ["--version"],
          "outputs": [ { "at_ms": 0, "stream": "stdout", "data": "codex 1.2.3\n" } ],
          "termination": { "type": "exit", "code": 0 },
          "max_calls": 1 } ] }
  ]
}`

func parseOK(t testing.TB, doc []byte) *Scenario {
	t.Helper()
	sc, issues := ParseScenario(doc)
	if len(issues) > 0 {
		t.Fatalf("rejected: %v", IssueList(issues))
	}
	return sc
}

func commitments(t testing.TB, sc *Scenario) Commitments {
	t.Helper()
	c, err := sc.Commitments()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func digests(c Commitments) [5]string {
	return [5]string{c.FullScenarioSHA256, c.ComparisonContractSHA256, c.NormalizationSHA256, c.ShimPlanSHA256, c.ReplayPlanSHA256}
}

func TestCommitmentsMatchEmbeddedValues(t *testing.T) {
	c := commitments(t, parseOK(t, []byte(seedScenario)))
	pairs := []struct {
		raw    json.RawMessage
		digest string
	}{
		{c.Scenario, c.FullScenarioSHA256}, {c.ComparisonContract, c.ComparisonContractSHA256},
		{c.Normalization, c.NormalizationSHA256}, {c.ShimPlan, c.ShimPlanSHA256}, {c.ReplayPlan, c.ReplayPlanSHA256},
	}
	for i, p := range pairs {
		var v any
		if err := json.Unmarshal(p.raw, &v); err != nil {
			t.Fatal(err)
		}
		d, err := evidence.Digest(v)
		if err != nil || d != p.digest {
			t.Errorf("pair %d: digest %s, embedded value hashes to %s (%v)", i, p.digest, d, err)
		}
	}
	if strings.Contains(string(c.Scenario), "user@example.test") || !strings.Contains(string(c.Scenario), RedactedInput(18)) {
		t.Errorf("sensitive input not redacted: %s", c.Scenario)
	}
	sha, err := parseOK(t, []byte(seedScenario)).FullScenarioSHA256()
	if err != nil || sha != c.FullScenarioSHA256 {
		t.Errorf("FullScenarioSHA256 %s, %v", sha, err)
	}
}

func TestDigestsIgnoreSpellingAndOrder(t *testing.T) {
	a := commitments(t, parseOK(t, []byte(`{"approved":true,"executable":"/x","working_directory":"/w","timeout_ms":100,"settle_ms":5.0}`)))
	b := commitments(t, parseOK(t, []byte(`{ "settle_ms" : 5, "timeout_ms":1e2, "working_directory":"/w","executable":"\/x","approved":true }`)))
	if digests(a) != digests(b) {
		t.Fatalf("digests differ: %v vs %v", digests(a), digests(b))
	}
	// Defaults are applied before hashing.
	c := commitments(t, parseOK(t, []byte(`{"approved":true,"executable":"/x","working_directory":"/w","timeout_ms":100,"settle_ms":5,"terminal":{"columns":80}}`)))
	if digests(a) != digests(c) {
		t.Fatal("an explicit default changed the digests")
	}
}

func TestComparisonContract(t *testing.T) {
	base := obj{"approved": true, "executable": "/usr/bin/a", "arguments": []any{"x"}, "working_directory": "/w",
		"environment": obj{"PATH": "/bin", "KEY": "one"}}
	other := obj{"approved": true, "executable": "/opt/b", "arguments": []any{"y", "z"}, "working_directory": "/w",
		"environment": obj{"KEY": "two", "PATH": "/usr/bin"}}
	ca := commitments(t, parseOK(t, mustJSON(t, base)))
	cb := commitments(t, parseOK(t, mustJSON(t, other)))
	if ca.ComparisonContractSHA256 != cb.ComparisonContractSHA256 {
		t.Fatalf("contracts differ:\n%s\n%s", ca.ComparisonContract, cb.ComparisonContract)
	}
	if ca.FullScenarioSHA256 == cb.FullScenarioSHA256 {
		t.Fatal("full scenarios should differ")
	}
	var contract map[string]any
	if err := json.Unmarshal(ca.ComparisonContract, &contract); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"executable", "arguments", "environment"} {
		if _, ok := contract[k]; ok {
			t.Errorf("contract keeps %s", k)
		}
	}
	if !reflect.DeepEqual(contract["environment_names"], []any{"KEY", "PATH"}) {
		t.Errorf("environment_names %v", contract["environment_names"])
	}
	raw, err := parseOK(t, mustJSON(t, base)).ComparisonContract()
	if err != nil || !bytes.Equal(raw, ca.ComparisonContract) {
		t.Fatalf("ComparisonContract() %s, %v", raw, err)
	}
	base["timeout_ms"] = 5
	if commitments(t, parseOK(t, mustJSON(t, base))).ComparisonContractSHA256 == ca.ComparisonContractSHA256 {
		t.Fatal("contract ignores timeout_ms")
	}
}

func TestSecretsAreRedactedEverywhere(t *testing.T) {
	doc := obj{"approved": true, "executable": "/x", "working_directory": "/w",
		"arguments":      []any{"--token=s3cret-value"},
		"environment":    obj{"TOKEN": "s3cret-value", "SHORT": "s3cret"},
		"secret_aliases": []any{"SHORT", "TOKEN"},
		"events":         []any{obj{"type": "input", "at_ms": 0, "data": "s3cret-value\r"}},
		"command_shims":  []any{obj{"name": "t", "routes": []any{obj{"outputs": []any{obj{"at_ms": 0, "stream": "stdout", "data": "s3cret"}}, "termination": obj{"type": "exit", "code": 0}}}}},
		"replay":         obj{"http": []any{obj{"method": "GET", "path": "/", "response": obj{"body": "x s3cret-value"}}}},
	}
	sc := parseOK(t, mustJSON(t, doc))
	c := commitments(t, sc)
	for name, raw := range map[string]json.RawMessage{"scenario": c.Scenario, "contract": c.ComparisonContract, "shims": c.ShimPlan, "replay": c.ReplayPlan} {
		if strings.Contains(string(raw), "s3cret") {
			t.Errorf("%s leaks a secret: %s", name, raw)
		}
	}
	if got := sc.Redactor()("a s3cret-value b s3cret"); got != "a <redacted> b <redacted>" {
		t.Errorf("redactor: %q", got)
	}
	if sc.Environment["TOKEN"] != "s3cret-value" {
		t.Error("Commitments changed the scenario")
	}
}

func TestPolicyRequest(t *testing.T) {
	sc := parseOK(t, mustJSON(t, obj{"approved": true, "executable": "/usr/bin/x", "working_directory": "/w",
		"environment": obj{"Z": "1", "A": "2"}, "inherit_environment": []any{"PATH"}, "filesystem_roots": []any{"/w/state"}}))
	want := policy.CaptureRequest{Approved: true, Executable: "/usr/bin/x", WorkingDir: "/w",
		EnvNames: []string{"A", "Z", "PATH"}, FilesystemRoots: []string{"/w/state"}, ExternalNetwork: true}
	if got := sc.PolicyRequest(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	settings := policy.DefaultCaptureSettings()
	settings.Enabled, settings.AllowExternalNetwork = true, true
	settings.ExecutableRoots, settings.WorkingRoots = []string{"/usr/bin"}, []string{"/w"}
	settings.AllowedEnv = []string{"A", "Z"}
	if reason, _ := settings.CheckCapture(sc.PolicyRequest()); reason != policy.ReasonEnvironmentNameNotAllowed {
		t.Fatalf("reason %q", reason)
	}
}

func FuzzParseScenario(f *testing.F) {
	f.Add([]byte(seedScenario))
	f.Add([]byte(`{"approved":true,"executable":"/x","working_directory":"/w"}`))
	f.Add([]byte(`{"approved":true,"executable":"/x","working_directory":"/w","environment":{"K":"v"},"secret_aliases":["K"],"replay":{"machine":{"a":[1,2.5,null]}},"reactive":{"version":1}}`))
	f.Add([]byte(`{"approved":true,"executable":"/x","working_directory":"/w","normalization":{"patterns":[{"pattern":"\\d+","replacement":"<n>"}]}}`))
	f.Add([]byte(`{"approved":false,"a":1,"a":2}`))
	f.Add([]byte(`[1,"\ud800"]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, issues := ParseScenario(data)
		if (sc == nil) == (len(issues) == 0) {
			t.Fatalf("scenario %v with %d issues", sc != nil, len(issues))
		}
		if len(issues) > MaxIssues {
			t.Fatalf("%d issues", len(issues))
		}
		if sc == nil {
			return
		}
		c1, err := sc.Commitments()
		if err != nil {
			t.Fatalf("accepted scenario has no commitments: %v", err)
		}
		again, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		sc2, issues := ParseScenario(again)
		if len(issues) > 0 {
			t.Fatalf("re-marshalled scenario rejected: %v\n%s", IssueList(issues), again)
		}
		c2, err := sc2.Commitments()
		if err != nil || digests(c1) != digests(c2) {
			t.Fatalf("digests changed after a round trip: %v vs %v (%v)", digests(c1), digests(c2), err)
		}
		third, _ := json.Marshal(sc2)
		if !bytes.Equal(again, third) {
			t.Fatalf("marshal not stable:\n%s\n%s", again, third)
		}
	})
}
