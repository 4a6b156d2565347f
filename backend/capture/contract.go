package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// Placeholders that replace secret text in everything a capture records.
const (
	// RedactedSecret replaces every occurrence of a secret alias's value.
	RedactedSecret = "<redacted>"
)

// RedactedInput is the placeholder stored instead of sensitive input data
// of n bytes: "<redacted-input:N-bytes>".
func RedactedInput(n int) string { return fmt.Sprintf("<redacted-input:%d-bytes>", n) }

// MarshalJSON writes every member of the scenario, with empty lists and
// maps as [] and {} (never null) and an absent reactive or replay machine
// as null, so the output re-parses with ParseScenario.
func (s Scenario) MarshalJSON() ([]byte, error) {
	type plain Scenario
	p := plain(s)
	p.Arguments = strictjson.NonNil(p.Arguments)
	if p.Environment == nil {
		p.Environment = map[string]string{}
	}
	p.InheritEnvironment = strictjson.NonNil(p.InheritEnvironment)
	p.SecretAliases = strictjson.NonNil(p.SecretAliases)
	p.FilesystemRoots = strictjson.NonNil(p.FilesystemRoots)
	p.Events = strictjson.NonNil(p.Events)
	p.Checkpoints = strictjson.NonNil(p.Checkpoints)
	p.CommandShims = strictjson.NonNil(p.CommandShims)
	p.Normalization.Patterns = strictjson.NonNil(p.Normalization.Patterns)
	p.Replay.HTTP = strictjson.NonNil(p.Replay.HTTP)
	p.Replay.WebsocketMessages = strictjson.NonNil(p.Replay.WebsocketMessages)
	p.Replay.WebsocketConnections = strictjson.NonNil(p.Replay.WebsocketConnections)
	if len(p.Replay.Machine) == 0 {
		p.Replay.Machine = json.RawMessage("null")
	}
	if len(p.Reactive) == 0 {
		p.Reactive = json.RawMessage("null")
	}
	return json.Marshal(p)
}

// Redactor returns a function that replaces every occurrence of a secret
// alias's value with RedactedSecret in one left-to-right pass (longer
// values first where two start at the same place, and never inside a
// placeholder it has just written). With no secret aliases it returns its
// input unchanged.
func (s *Scenario) Redactor() func(string) string {
	var secrets []string
	for _, alias := range s.SecretAliases {
		if v := s.Environment[alias]; v != "" && !slices.Contains(secrets, v) {
			secrets = append(secrets, v)
		}
	}
	if len(secrets) == 0 {
		return func(x string) string { return x }
	}
	sort.Slice(secrets, func(i, j int) bool {
		if len(secrets[i]) != len(secrets[j]) {
			return len(secrets[i]) > len(secrets[j])
		}
		return secrets[i] < secrets[j]
	})
	pairs := make([]string, 0, 2*len(secrets))
	for _, v := range secrets {
		pairs = append(pairs, v, RedactedSecret)
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}

// Commitments are the manifest values a scenario determines, each with the
// SHA-256 of its RFC 8785 canonical JSON (evidence.Digest). Every value is
// secret-safe: sensitive input data is RedactedInput(len) and secret alias
// values are RedactedSecret in every string value (member names are kept).
type Commitments struct {
	// Scenario is the full scenario projection (manifest.scenario).
	Scenario json.RawMessage
	// ComparisonContract is the projection without executable and
	// arguments, with environment replaced by environment_names (the
	// sorted names, no values).
	ComparisonContract json.RawMessage
	// Normalization, ShimPlan (the command_shims list) and ReplayPlan (the
	// replay object) are the projection's members of those names.
	Normalization json.RawMessage
	ShimPlan      json.RawMessage
	ReplayPlan    json.RawMessage

	FullScenarioSHA256       string
	ComparisonContractSHA256 string
	NormalizationSHA256      string
	ShimPlanSHA256           string
	ReplayPlanSHA256         string
}

// Commitments computes the manifest values and digests of s. It fails
// only when s cannot be encoded (for example an event of unknown type,
// which ParseScenario never produces).
func (s *Scenario) Commitments() (Commitments, error) {
	proj, err := s.projection()
	if err != nil {
		return Commitments{}, err
	}
	var c Commitments
	marshal := func(v any) (json.RawMessage, string, error) {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, "", fmt.Errorf("capture: encode commitment: %w", err)
		}
		canon, err := evidence.Canonicalize(raw)
		if err != nil {
			return nil, "", fmt.Errorf("capture: canonicalize commitment: %w", err)
		}
		d, err := evidence.DigestJSON(canon)
		return canon, d, err
	}
	if c.Scenario, c.FullScenarioSHA256, err = marshal(proj); err != nil {
		return Commitments{}, err
	}
	contract := make(map[string]any, len(proj))
	for k, v := range proj {
		contract[k] = v
	}
	delete(contract, "executable")
	delete(contract, "arguments")
	delete(contract, "environment")
	contract["environment_names"] = s.EnvironmentNames()
	if c.ComparisonContract, c.ComparisonContractSHA256, err = marshal(contract); err != nil {
		return Commitments{}, err
	}
	if c.Normalization, c.NormalizationSHA256, err = marshal(proj["normalization"]); err != nil {
		return Commitments{}, err
	}
	if c.ShimPlan, c.ShimPlanSHA256, err = marshal(proj["command_shims"]); err != nil {
		return Commitments{}, err
	}
	if c.ReplayPlan, c.ReplayPlanSHA256, err = marshal(proj["replay"]); err != nil {
		return Commitments{}, err
	}
	return c, nil
}

// projection is the secret-safe scenario as a generic JSON object.
func (s *Scenario) projection() (map[string]any, error) {
	cp := *s
	cp.Events = slices.Clone(s.Events)
	for i, e := range cp.Events {
		if e.Type == EventInput && e.Sensitive {
			cp.Events[i].Data = RedactedInput(len(e.Data))
		}
	}
	cp.Reactive = redactedReactive(s) // reactive_parse.go
	raw, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("capture: encode scenario: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("capture: decode scenario: %w", err)
	}
	redact := s.Redactor()
	return redactStrings(v, redact).(map[string]any), nil
}

// redactStrings applies redact to every string value inside v.
func redactStrings(v any, redact func(string) string) any {
	switch t := v.(type) {
	case string:
		return redact(t)
	case map[string]any:
		for k, x := range t {
			t[k] = redactStrings(x, redact)
		}
	case []any:
		for i, x := range t {
			t[i] = redactStrings(x, redact)
		}
	}
	return v
}

// ComparisonContract returns the canonical JSON of the scenario minus
// executable, arguments and environment values (see Commitments).
func (s *Scenario) ComparisonContract() (json.RawMessage, error) {
	c, err := s.Commitments()
	return c.ComparisonContract, err
}

// FullScenarioSHA256 is the digest of the secret-safe full scenario.
func (s *Scenario) FullScenarioSHA256() (string, error) {
	c, err := s.Commitments()
	return c.FullScenarioSHA256, err
}

// ComparisonContractSHA256 is the digest of ComparisonContract.
func (s *Scenario) ComparisonContractSHA256() (string, error) {
	c, err := s.Commitments()
	return c.ComparisonContractSHA256, err
}

// NormalizationSHA256 is the digest of the (secret-safe) normalization.
func (s *Scenario) NormalizationSHA256() (string, error) {
	c, err := s.Commitments()
	return c.NormalizationSHA256, err
}

// ShimPlanSHA256 is the digest of the (secret-safe) command_shims list.
func (s *Scenario) ShimPlanSHA256() (string, error) {
	c, err := s.Commitments()
	return c.ShimPlanSHA256, err
}

// ReplayPlanSHA256 is the digest of the (secret-safe) replay object.
func (s *Scenario) ReplayPlanSHA256() (string, error) {
	c, err := s.Commitments()
	return c.ReplayPlanSHA256, err
}

// PolicyRequest is what the scenario asks of the operator policy: its
// approval, executable, working directory, every environment name it sets
// (sorted) followed by the names it inherits (in order), its filesystem
// roots, and host networking (network_access "host", the only value).
// The returned slices are not shared with s.
func (s *Scenario) PolicyRequest() policy.CaptureRequest {
	names := append(s.EnvironmentNames(), s.InheritEnvironment...)
	return policy.CaptureRequest{
		Approved:        s.Approved,
		Executable:      s.Executable,
		WorkingDir:      s.WorkingDirectory,
		EnvNames:        names,
		FilesystemRoots: slices.Clone(s.FilesystemRoots),
		ExternalNetwork: s.NetworkAccess == "host",
	}
}
