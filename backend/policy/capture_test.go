package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// captureAllowedSettings and captureAllowedRequest form a pair that passes
// every check; tests break one thing at a time.
func captureAllowedSettings() CaptureSettings {
	return CaptureSettings{
		Enabled:              true,
		ExecutableRoots:      []string{"/opt/tools", "/usr/bin"},
		WorkingRoots:         []string{"/work/project", "/tmp/scratch"},
		AllowedEnv:           []string{"PATH", "LANG", "API_TOKEN"},
		AllowExternalNetwork: true,
		AutoGrant:            true,
	}
}

func captureAllowedRequest() CaptureRequest {
	return CaptureRequest{
		Approved:        true,
		Executable:      "/opt/tools/bin/cli",
		WorkingDir:      "/work/project/sub",
		EnvNames:        []string{"LANG", "API_TOKEN"},
		FilesystemRoots: []string{"/work/project", "/tmp/scratch/out"},
		ExternalNetwork: true,
	}
}

func TestCaptureDefaults(t *testing.T) {
	d := DefaultCaptureSettings()
	if d.Enabled || d.AllowExternalNetwork || !d.AutoGrant {
		t.Fatalf("defaults = %+v, want disabled, no network, autoGrant on", d)
	}
	if d.ExecutableRoots == nil || d.WorkingRoots == nil || d.AllowedEnv == nil ||
		len(d.ExecutableRoots)+len(d.WorkingRoots)+len(d.AllowedEnv) != 0 {
		t.Fatalf("default lists = %#v, want empty non-nil", d)
	}
	if reason, _ := d.CheckCapture(captureAllowedRequest()); reason != ReasonCaptureDisabled {
		t.Fatalf("defaults allow capture: reason %q", reason)
	}
	for _, doc := range []string{`{}`, ` { } `} {
		got, issues := ParseCaptureSettings([]byte(doc))
		if issues != nil || !reflect.DeepEqual(got, d) {
			t.Fatalf("parse %s = %+v, %v; want defaults", doc, got, issues)
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"enabled":false,"executableRoots":[],"workingRoots":[],"allowedEnv":[],"allowExternalNetwork":false,"autoGrant":true}`
	if string(b) != want {
		t.Fatalf("marshal defaults = %s, want %s", b, want)
	}
	// A zero value with nil lists still marshals lists as [].
	b, _ = json.Marshal(CaptureSettings{})
	if !strings.Contains(string(b), `"executableRoots":[]`) {
		t.Fatalf("nil lists marshal as %s", b)
	}
}

func TestCaptureCheckEachReasonAlone(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*CaptureSettings, *CaptureRequest)
		want   string
	}{
		{"allowed", func(*CaptureSettings, *CaptureRequest) {}, ""},
		{"allowed without network when network not approved", func(s *CaptureSettings, r *CaptureRequest) {
			s.AllowExternalNetwork, r.ExternalNetwork = false, false
		}, ""},
		{"allowed with executable equal to a root", func(_ *CaptureSettings, r *CaptureRequest) { r.Executable = "/usr/bin" }, ""},
		{"allowed with no env and no filesystem roots", func(_ *CaptureSettings, r *CaptureRequest) {
			r.EnvNames, r.FilesystemRoots = nil, nil
		}, ""},
		{"unclean executable that stays inside lexically", func(_ *CaptureSettings, r *CaptureRequest) {
			r.Executable = "/opt/tools/./bin//cli"
		}, ReasonUncleanPath},
		{"unclean working dir that stays inside lexically", func(_ *CaptureSettings, r *CaptureRequest) {
			r.WorkingDir = "/work/project/a/../b/"
		}, ReasonUncleanPath},
		{"unclean filesystem root", func(_ *CaptureSettings, r *CaptureRequest) {
			r.FilesystemRoots = []string{"/work/project/"}
		}, ReasonUncleanPath},
		{"disabled", func(s *CaptureSettings, _ *CaptureRequest) { s.Enabled = false }, ReasonCaptureDisabled},
		{"not approved", func(_ *CaptureSettings, r *CaptureRequest) { r.Approved = false }, ReasonScenarioNotApproved},
		{"host network not approved", func(s *CaptureSettings, _ *CaptureRequest) { s.AllowExternalNetwork = false }, ReasonHostNetworkNotApproved},
		{"executable outside", func(_ *CaptureSettings, r *CaptureRequest) { r.Executable = "/etc/passwd" }, ReasonExecutableOutsideRoots},
		{"executable sibling prefix", func(_ *CaptureSettings, r *CaptureRequest) { r.Executable = "/opt/toolsX/cli" }, ReasonExecutableOutsideRoots},
		{"executable escapes with dotdot", func(_ *CaptureSettings, r *CaptureRequest) { r.Executable = "/opt/tools/../../bin/sh" }, ReasonUncleanPath},
		{"executable relative", func(_ *CaptureSettings, r *CaptureRequest) { r.Executable = "opt/tools/cli" }, ReasonExecutableOutsideRoots},
		{"executable empty", func(_ *CaptureSettings, r *CaptureRequest) { r.Executable = "" }, ReasonExecutableOutsideRoots},
		{"no executable roots", func(s *CaptureSettings, _ *CaptureRequest) { s.ExecutableRoots = nil }, ReasonExecutableOutsideRoots},
		{"executable inside a working root only", func(_ *CaptureSettings, r *CaptureRequest) { r.Executable = "/work/project/run.sh" }, ReasonExecutableOutsideRoots},
		{"working dir outside", func(_ *CaptureSettings, r *CaptureRequest) { r.WorkingDir = "/home/user" }, ReasonWorkingDirectoryOutsideRoots},
		{"working dir inside an executable root only", func(_ *CaptureSettings, r *CaptureRequest) { r.WorkingDir = "/opt/tools" }, ReasonWorkingDirectoryOutsideRoots},
		{"working dir relative", func(_ *CaptureSettings, r *CaptureRequest) { r.WorkingDir = "." }, ReasonWorkingDirectoryOutsideRoots},
		{"no working roots", func(s *CaptureSettings, r *CaptureRequest) { s.WorkingRoots = []string{} }, ReasonWorkingDirectoryOutsideRoots},
		{"env name not allowed", func(_ *CaptureSettings, r *CaptureRequest) { r.EnvNames = []string{"LANG", "SECRET"} }, ReasonEnvironmentNameNotAllowed},
		{"env name case differs", func(_ *CaptureSettings, r *CaptureRequest) { r.EnvNames = []string{"lang"} }, ReasonEnvironmentNameNotAllowed},
		{"env name empty", func(_ *CaptureSettings, r *CaptureRequest) { r.EnvNames = []string{""} }, ReasonEnvironmentNameNotAllowed},
		{"no allowed env", func(s *CaptureSettings, _ *CaptureRequest) { s.AllowedEnv = nil }, ReasonEnvironmentNameNotAllowed},
		{"filesystem root outside", func(_ *CaptureSettings, r *CaptureRequest) { r.FilesystemRoots = []string{"/work/project", "/etc"} }, ReasonFilesystemRootOutsideRoots},
		{"filesystem root parent of working root", func(_ *CaptureSettings, r *CaptureRequest) { r.FilesystemRoots = []string{"/work"} }, ReasonFilesystemRootOutsideRoots},
		{"filesystem root in executable root only", func(_ *CaptureSettings, r *CaptureRequest) { r.FilesystemRoots = []string{"/opt/tools"} }, ReasonFilesystemRootOutsideRoots},
		{"filesystem root relative", func(_ *CaptureSettings, r *CaptureRequest) { r.FilesystemRoots = []string{"work/project"} }, ReasonFilesystemRootOutsideRoots},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, r := captureAllowedSettings(), captureAllowedRequest()
			tt.mutate(&s, &r)
			reason, msg := s.CheckCapture(r)
			if reason != tt.want {
				t.Fatalf("reason = %q (%s), want %q", reason, msg, tt.want)
			}
			if (reason == "") != (msg == "") {
				t.Fatalf("reason %q with message %q", reason, msg)
			}
		})
	}
}

// TestCaptureCheckOrder starts from a request failing every check and fixes
// one check at a time: each step must report exactly the next reason.
func TestCaptureCheckOrder(t *testing.T) {
	s := CaptureSettings{
		Enabled:              false,
		ExecutableRoots:      []string{"/opt/tools"},
		WorkingRoots:         []string{"/work/project"},
		AllowedEnv:           []string{"LANG"},
		AllowExternalNetwork: false,
	}
	r := CaptureRequest{
		Approved:        false,
		ExternalNetwork: true,
		Executable:      "/bin/sh",
		WorkingDir:      "/home/user",
		EnvNames:        []string{"SECRET"},
		FilesystemRoots: []string{"/etc"},
	}
	steps := []struct {
		want string
		fix  func()
	}{
		{ReasonCaptureDisabled, func() { s.Enabled = true }},
		{ReasonScenarioNotApproved, func() { r.Approved = true }},
		{ReasonHostNetworkNotApproved, func() { s.AllowExternalNetwork = true }},
		{ReasonExecutableOutsideRoots, func() { r.Executable = "/opt/tools/cli" }},
		{ReasonWorkingDirectoryOutsideRoots, func() { r.WorkingDir = "/work/project" }},
		{ReasonEnvironmentNameNotAllowed, func() { r.EnvNames = []string{"LANG"} }},
		{ReasonFilesystemRootOutsideRoots, func() { r.FilesystemRoots = []string{"/work/project/data"} }},
		{"", nil},
	}
	for i, step := range steps {
		reason, msg := s.CheckCapture(r)
		if reason != step.want {
			t.Fatalf("step %d: reason = %q (%s), want %q", i, reason, msg, step.want)
		}
		if step.fix != nil {
			step.fix()
		}
	}
}

func TestCaptureWithinRoot(t *testing.T) {
	tests := []struct {
		p, root string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/b/c/d", "/a/b", true},
		{"/a/bc", "/a/b", false},
		{"/a/b.c", "/a/b", false},
		{"/a", "/a/b", false},
		{"/a/b/", "/a/b", true},
		{"/a/b", "/a/b/", true},
		{"/a/b/c/", "/a/b//", true},
		{"/a//b///c", "/a/b", true},
		{"/a/b/./c", "/a/b", true},
		{"/a/b/../c", "/a/b", false},
		{"/a/b/../b/c", "/a/b", true},
		{"/a/b/..", "/a/b", false},
		{"/a/b/c/..", "/a/b", true},
		{"/a/c", "/a/b/..", true},
		{"/../a/b", "/a", true},
		{"/anything/at/all", "/", true},
		{"/", "/", true},
		{"/x", "//", true},
		{"/", "/a", false},
		{"a/b", "/a", false},
		{"a/b", "a", false},
		{"/a/b", "a", false},
		{"", "/", false},
		{"/a", "", false},
		{"", "", false},
		{".", "/", false},
	}
	for _, tt := range tests {
		if got := WithinRoot(tt.p, tt.root); got != tt.want {
			t.Errorf("WithinRoot(%q, %q) = %v, want %v", tt.p, tt.root, got, tt.want)
		}
	}
}

func TestCaptureParseValid(t *testing.T) {
	doc := `{
		"enabled": true,
		"executableRoots": ["/opt/tools", "/usr/local/bin"],
		"workingRoots": ["/work"],
		"allowedEnv": ["PATH", "_x", "A1_b"],
		"allowExternalNetwork": true,
		"autoGrant": false
	}`
	got, issues := ParseCaptureSettings([]byte(doc))
	if issues != nil {
		t.Fatalf("issues: %v", issues)
	}
	want := CaptureSettings{
		Enabled:              true,
		ExecutableRoots:      []string{"/opt/tools", "/usr/local/bin"},
		WorkingRoots:         []string{"/work"},
		AllowedEnv:           []string{"PATH", "_x", "A1_b"},
		AllowExternalNetwork: true,
		AutoGrant:            false,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Partial documents take defaults for missing fields.
	got, issues = ParseCaptureSettings([]byte(`{"enabled":true,"workingRoots":["/"]}`))
	want = DefaultCaptureSettings()
	want.Enabled, want.WorkingRoots = true, []string{"/"}
	if issues != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("partial: got %+v, %v", got, issues)
	}
	// encoding/json goes through the strict parser.
	var viaJSON CaptureSettings
	if err := json.Unmarshal([]byte(doc), &viaJSON); err != nil || !reflect.DeepEqual(viaJSON, CaptureSettings{
		Enabled: true, ExecutableRoots: []string{"/opt/tools", "/usr/local/bin"}, WorkingRoots: []string{"/work"},
		AllowedEnv: []string{"PATH", "_x", "A1_b"}, AllowExternalNetwork: true,
	}) {
		t.Fatalf("json.Unmarshal: %+v, %v", viaJSON, err)
	}
	var serr *CaptureSettingsError
	if err := json.Unmarshal([]byte(`{"x":1}`), &viaJSON); !errors.As(err, &serr) ||
		len(serr.Issues) != 1 || serr.Issues[0].Path != "$.x" || !strings.Contains(err.Error(), "unknown_field at $.x") {
		t.Fatalf("json.Unmarshal of unknown field: %v", err)
	}
}

func captureList(n int, format string) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`"`+format+`"`, i)
	}
	return "[" + strings.Join(items, ",") + "]"
}

func TestCaptureParseRejects(t *testing.T) {
	type issue struct{ field, code string }
	tests := []struct {
		name string
		doc  string
		want []issue // nil means accepted
	}{
		{"empty input", ``, []issue{{"$", CaptureIssueInvalidJSON}}},
		{"not json", `{enabled: true}`, []issue{{"$", CaptureIssueInvalidJSON}}},
		{"trailing data", `{} {}`, []issue{{"$", CaptureIssueInvalidJSON}}},
		{"truncated", `{"enabled": true`, []issue{{"$", CaptureIssueInvalidJSON}}},
		{"invalid utf-8", "{\"allowedEnv\": [\"\xff\"]}", []issue{{"$", CaptureIssueInvalidJSON}}},
		{"top-level null", `null`, []issue{{"$", CaptureIssueWrongType}}},
		{"top-level array", `[]`, []issue{{"$", CaptureIssueWrongType}}},
		{"top-level string", `"x"`, []issue{{"$", CaptureIssueWrongType}}},

		{"unknown field", `{"enabled":true,"extra":1}`, []issue{{"$.extra", CaptureIssueUnknownField}}},
		{"field names are case-sensitive", `{"Enabled":true}`, []issue{{"$.Enabled", CaptureIssueUnknownField}}},
		{"unknown field with odd name", `{"a b":1}`, []issue{{`$["a b"]`, CaptureIssueUnknownField}}},
		{"duplicate field", `{"enabled":true,"enabled":false}`, []issue{{"$.enabled", CaptureIssueDuplicateField}}},
		{"duplicate field via escape", `{"enabled":true,"enabl\u0065d":true}`, []issue{{"$.enabled", CaptureIssueDuplicateField}}},

		{"enabled string", `{"enabled":"true"}`, []issue{{"$.enabled", CaptureIssueWrongType}}},
		{"enabled number", `{"enabled":1}`, []issue{{"$.enabled", CaptureIssueWrongType}}},
		{"enabled null", `{"enabled":null}`, []issue{{"$.enabled", CaptureIssueWrongType}}},
		{"allowExternalNetwork wrong", `{"allowExternalNetwork":{}}`, []issue{{"$.allowExternalNetwork", CaptureIssueWrongType}}},
		{"autoGrant wrong", `{"autoGrant":[]}`, []issue{{"$.autoGrant", CaptureIssueWrongType}}},
		{"executableRoots string", `{"executableRoots":"/opt"}`, []issue{{"$.executableRoots", CaptureIssueWrongType}}},
		{"executableRoots null", `{"executableRoots":null}`, []issue{{"$.executableRoots", CaptureIssueWrongType}}},
		{"workingRoots object", `{"workingRoots":{}}`, []issue{{"$.workingRoots", CaptureIssueWrongType}}},
		{"allowedEnv number", `{"allowedEnv":3}`, []issue{{"$.allowedEnv", CaptureIssueWrongType}}},
		{"list element number", `{"executableRoots":["/a",1,"/b"]}`, []issue{{"$.executableRoots[1]", CaptureIssueWrongType}}},
		{"list element null", `{"allowedEnv":["A",null]}`, []issue{{"$.allowedEnv[1]", CaptureIssueWrongType}}},
		{"list element array", `{"workingRoots":[["/a"]]}`, []issue{{"$.workingRoots[0]", CaptureIssueWrongType}}},

		{"relative path", `{"executableRoots":["/a","/b","rel/c"]}`, []issue{{"$.executableRoots[2]", CaptureIssueRelativePath}}},
		{"dot relative path", `{"workingRoots":["./x"]}`, []issue{{"$.workingRoots[0]", CaptureIssueRelativePath}}},
		{"empty path", `{"workingRoots":[""]}`, []issue{{"$.workingRoots[0]", CaptureIssueRelativePath}}},
		{"trailing slash", `{"workingRoots":["/a","/a/b/"]}`, []issue{{"$.workingRoots[1]", CaptureIssueUncleanPath}}},
		{"double slash", `{"executableRoots":["/a//b"]}`, []issue{{"$.executableRoots[0]", CaptureIssueUncleanPath}}},
		{"dot segment", `{"executableRoots":["/a/./b"]}`, []issue{{"$.executableRoots[0]", CaptureIssueUncleanPath}}},
		{"dotdot segment", `{"workingRoots":["/a/../b"]}`, []issue{{"$.workingRoots[0]", CaptureIssueUncleanPath}}},
		{"nul in path", `{"workingRoots":["/a\u0000b"]}`, []issue{{"$.workingRoots[0]", CaptureIssueInvalidPath}}},
		{"root is clean", `{"workingRoots":["/"]}`, nil},

		{"duplicate path", `{"workingRoots":["/a","/b","/a"]}`, []issue{{"$.workingRoots[2]", CaptureIssueDuplicateEntry}}},
		{"duplicate env", `{"allowedEnv":["A","B","B"]}`, []issue{{"$.allowedEnv[2]", CaptureIssueDuplicateEntry}}},
		{"env names are case-sensitive", `{"allowedEnv":["a","A"]}`, nil},
		{"same path in two lists is fine", `{"executableRoots":["/a"],"workingRoots":["/a"]}`, nil},

		{"env leading digit", `{"allowedEnv":["OK","1A"]}`, []issue{{"$.allowedEnv[1]", CaptureIssueInvalidEnvName}}},
		{"env dash", `{"allowedEnv":["A-B"]}`, []issue{{"$.allowedEnv[0]", CaptureIssueInvalidEnvName}}},
		{"env space", `{"allowedEnv":["A B"]}`, []issue{{"$.allowedEnv[0]", CaptureIssueInvalidEnvName}}},
		{"env equals", `{"allowedEnv":["A=1"]}`, []issue{{"$.allowedEnv[0]", CaptureIssueInvalidEnvName}}},
		{"env empty", `{"allowedEnv":[""]}`, []issue{{"$.allowedEnv[0]", CaptureIssueInvalidEnvName}}},
		{"env non-ascii", `{"allowedEnv":["É"]}`, []issue{{"$.allowedEnv[0]", CaptureIssueInvalidEnvName}}},
		{"env newline", `{"allowedEnv":["A\nB"]}`, []issue{{"$.allowedEnv[0]", CaptureIssueInvalidEnvName}}},

		{"64 executable roots", `{"executableRoots":` + captureList(64, "/r%d") + `}`, nil},
		{"65 executable roots", `{"executableRoots":` + captureList(65, "/r%d") + `}`, []issue{{"$.executableRoots", CaptureIssueTooManyEntries}}},
		{"64 working roots", `{"workingRoots":` + captureList(64, "/w%d") + `}`, nil},
		{"65 working roots", `{"workingRoots":` + captureList(65, "/w%d") + `}`, []issue{{"$.workingRoots", CaptureIssueTooManyEntries}}},
		{"64 env names", `{"allowedEnv":` + captureList(64, "E%d") + `}`, nil},
		{"65 env names", `{"allowedEnv":` + captureList(65, "E%d") + `}`, []issue{{"$.allowedEnv", CaptureIssueTooManyEntries}}},

		{"several issues in document order", `{"zzz":1,"enabled":"no","executableRoots":["a","/b/"],"workingRoots":["/w","/w"],"allowedEnv":["9"],"autoGrant":null}`, []issue{
			{"$.zzz", CaptureIssueUnknownField},
			{"$.enabled", CaptureIssueWrongType},
			{"$.executableRoots[0]", CaptureIssueRelativePath},
			{"$.executableRoots[1]", CaptureIssueUncleanPath},
			{"$.workingRoots[1]", CaptureIssueDuplicateEntry},
			{"$.allowedEnv[0]", CaptureIssueInvalidEnvName},
			{"$.autoGrant", CaptureIssueWrongType},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, issues := ParseCaptureSettings([]byte(tt.doc))
			var gotIssues []issue
			for _, is := range issues {
				gotIssues = append(gotIssues, issue{is.Path, is.Code})
				if is.Message == "" {
					t.Errorf("issue %v has no message", is)
				}
			}
			if !reflect.DeepEqual(gotIssues, tt.want) {
				t.Fatalf("issues = %v, want %v", issues, tt.want)
			}
			if tt.want != nil {
				// Rejected whole: nothing of the document survives.
				if !reflect.DeepEqual(got, DefaultCaptureSettings()) {
					t.Fatalf("rejected document returned %+v, want defaults", got)
				}
				// encoding/json is just as strict (it may report syntax
				// errors itself before reaching UnmarshalJSON).
				viaJSON := captureAllowedSettings()
				if err := json.Unmarshal([]byte(tt.doc), &viaJSON); err == nil {
					t.Fatal("json.Unmarshal accepted the document")
				}
				if !reflect.DeepEqual(viaJSON, captureAllowedSettings()) {
					t.Fatalf("json.Unmarshal changed the target: %+v", viaJSON)
				}
			}
		})
	}
}

func TestCaptureParseIssueCountBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 1000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d":1`, i)
	}
	b.WriteString("}")
	_, issues := ParseCaptureSettings([]byte(b.String()))
	if len(issues) == 0 || len(issues) > captureMaxIssues {
		t.Fatalf("%d issues, want 1..%d", len(issues), captureMaxIssues)
	}
}

func captureEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestCaptureEnvOverrides(t *testing.T) {
	stored := CaptureSettings{
		Enabled:              false,
		ExecutableRoots:      []string{"/stored/exe"},
		WorkingRoots:         []string{"/stored/work"},
		AllowedEnv:           []string{"STORED"},
		AllowExternalNetwork: false,
		AutoGrant:            true,
	}
	tests := []struct {
		name string
		env  map[string]string
		want func(*CaptureSettings)
	}{
		{"none set", nil, func(*CaptureSettings) {}},
		{"empty values are unset", map[string]string{
			CaptureEnvEnabled: "", CaptureEnvExecutableRoots: "", CaptureEnvWorkingRoots: "",
			CaptureEnvAllowedEnv: "", CaptureEnvAllowExternalNetwork: "", CaptureEnvAutoGrant: "",
		}, func(*CaptureSettings) {}},
		{"enabled 1", map[string]string{CaptureEnvEnabled: "1"}, func(s *CaptureSettings) { s.Enabled = true }},
		{"enabled true", map[string]string{CaptureEnvEnabled: "true"}, func(s *CaptureSettings) { s.Enabled = true }},
		{"executable roots", map[string]string{CaptureEnvExecutableRoots: `["/env/a","/env/b"]`}, func(s *CaptureSettings) {
			s.ExecutableRoots = []string{"/env/a", "/env/b"}
		}},
		{"executable roots cleared", map[string]string{CaptureEnvExecutableRoots: `[]`}, func(s *CaptureSettings) { s.ExecutableRoots = []string{} }},
		{"working roots", map[string]string{CaptureEnvWorkingRoots: ` ["/env/w"] `}, func(s *CaptureSettings) { s.WorkingRoots = []string{"/env/w"} }},
		{"allowed env", map[string]string{CaptureEnvAllowedEnv: `["LANG","_X"]`}, func(s *CaptureSettings) { s.AllowedEnv = []string{"LANG", "_X"} }},
		{"allow external network 1", map[string]string{CaptureEnvAllowExternalNetwork: "1"}, func(s *CaptureSettings) { s.AllowExternalNetwork = true }},
		{"allow external network true", map[string]string{CaptureEnvAllowExternalNetwork: "true"}, func(s *CaptureSettings) { s.AllowExternalNetwork = true }},
		{"auto grant 0", map[string]string{CaptureEnvAutoGrant: "0"}, func(s *CaptureSettings) { s.AutoGrant = false }},
		{"auto grant false", map[string]string{CaptureEnvAutoGrant: "false"}, func(s *CaptureSettings) { s.AutoGrant = false }},
		{"all at once", map[string]string{
			CaptureEnvEnabled: "true", CaptureEnvExecutableRoots: `["/x"]`, CaptureEnvWorkingRoots: `["/y"]`,
			CaptureEnvAllowedEnv: `["Z"]`, CaptureEnvAllowExternalNetwork: "1", CaptureEnvAutoGrant: "false",
		}, func(s *CaptureSettings) {
			*s = CaptureSettings{true, []string{"/x"}, []string{"/y"}, []string{"Z"}, true, false}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := stored
			want.ExecutableRoots = append([]string(nil), stored.ExecutableRoots...)
			want.WorkingRoots = append([]string(nil), stored.WorkingRoots...)
			want.AllowedEnv = append([]string(nil), stored.AllowedEnv...)
			tt.want(&want)
			got, err := stored.WithEnvOverrides(captureEnv(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
		})
	}

	// Overrides win over stored values in both directions.
	on := captureAllowedSettings()
	got, err := on.WithEnvOverrides(captureEnv(map[string]string{
		CaptureEnvEnabled: "0", CaptureEnvAllowExternalNetwork: "false", CaptureEnvAutoGrant: "0",
	}))
	if err != nil || got.Enabled || got.AllowExternalNetwork || got.AutoGrant {
		t.Fatalf("disable overrides: %+v, %v", got, err)
	}
	if !reflect.DeepEqual(got.ExecutableRoots, on.ExecutableRoots) {
		t.Fatalf("unset list changed: %v", got.ExecutableRoots)
	}
	// The result does not share list storage with the receiver.
	got.ExecutableRoots[0] = "/changed"
	if on.ExecutableRoots[0] == "/changed" {
		t.Fatal("WithEnvOverrides result aliases the stored settings")
	}
}

func TestCaptureEnvOverridesMalformed(t *testing.T) {
	tests := []struct{ variable, value string }{
		{CaptureEnvEnabled, "yes"},
		{CaptureEnvEnabled, "TRUE"},
		{CaptureEnvEnabled, " 1"},
		{CaptureEnvEnabled, "2"},
		{CaptureEnvAllowExternalNetwork, "on"},
		{CaptureEnvAutoGrant, "no"},
		{CaptureEnvExecutableRoots, "/opt/tools"},
		{CaptureEnvExecutableRoots, `["/a"`},
		{CaptureEnvExecutableRoots, `null`},
		{CaptureEnvExecutableRoots, `{"a":1}`},
		{CaptureEnvExecutableRoots, `"/a"`},
		{CaptureEnvExecutableRoots, `["rel"]`},
		{CaptureEnvExecutableRoots, `["/a/"]`},
		{CaptureEnvExecutableRoots, `["/a","/a"]`},
		{CaptureEnvExecutableRoots, `[1]`},
		{CaptureEnvExecutableRoots, captureList(65, "/r%d")},
		{CaptureEnvWorkingRoots, `["/w/../x"]`},
		{CaptureEnvWorkingRoots, `[""]`},
		{CaptureEnvWorkingRoots, "[\"/\xff\"]"},
		{CaptureEnvAllowedEnv, `["1BAD"]`},
		{CaptureEnvAllowedEnv, `["A","A"]`},
		{CaptureEnvAllowedEnv, `[null]`},
		{CaptureEnvAllowedEnv, `LANG`},
		{CaptureEnvAllowedEnv, captureList(65, "E%d")},
	}
	stored := captureAllowedSettings()
	for _, tt := range tests {
		t.Run(tt.variable+"="+tt.value, func(t *testing.T) {
			got, err := stored.WithEnvOverrides(captureEnv(map[string]string{tt.variable: tt.value}))
			if err == nil {
				t.Fatalf("accepted, got %+v", got)
			}
			if !strings.Contains(err.Error(), tt.variable) {
				t.Fatalf("error %q does not name %s", err, tt.variable)
			}
			var envErr *CaptureEnvError
			if !errors.As(err, &envErr) || envErr.Variable != tt.variable {
				t.Fatalf("error %v is not a CaptureEnvError for %s", err, tt.variable)
			}
			if !reflect.DeepEqual(got, DefaultCaptureSettings()) {
				t.Fatalf("settings returned with error = %+v, want defaults (disabled)", got)
			}
		})
	}

	// Every malformed variable is named, and a valid one does not hide them.
	_, err := stored.WithEnvOverrides(captureEnv(map[string]string{
		CaptureEnvEnabled: "maybe", CaptureEnvAllowedEnv: `["-"]`, CaptureEnvWorkingRoots: `["/ok"]`,
	}))
	if err == nil || !strings.Contains(err.Error(), CaptureEnvEnabled) || !strings.Contains(err.Error(), CaptureEnvAllowedEnv) ||
		strings.Contains(err.Error(), CaptureEnvWorkingRoots) {
		t.Fatalf("combined error = %v", err)
	}
}

func TestCaptureEnvOverridesNilGetenvUsesProcessEnv(t *testing.T) {
	t.Setenv(CaptureEnvEnabled, "true")
	t.Setenv(CaptureEnvAllowedEnv, `["FROM_ENV"]`)
	got, err := DefaultCaptureSettings().WithEnvOverrides(nil)
	if err != nil || !got.Enabled || !reflect.DeepEqual(got.AllowedEnv, []string{"FROM_ENV"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

func FuzzParseCaptureSettings(f *testing.F) {
	seeds := []string{
		``, `{}`, `null`, `[]`, `{"enabled":true}`,
		`{"enabled":true,"executableRoots":["/opt/tools"],"workingRoots":["/work","/"],"allowedEnv":["PATH","_A1"],"allowExternalNetwork":true,"autoGrant":false}`,
		`{"executableRoots":["rel","/a/","/a","/a"]}`,
		`{"allowedEnv":["1A","A-B",""]}`,
		`{"enabled":true,"enabled":false}`,
		`{"Enabled":true,"x":null}`,
		`{"workingRoots":["/a\u0000"]}`,
		`{"workingRoots":["/\u00e9t\u00e9"]}`,
		`{"executableRoots":` + captureList(65, "/r%d") + `}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, issues := ParseCaptureSettings(data)
		if len(issues) > 0 {
			if len(issues) > captureMaxIssues {
				t.Fatalf("%d issues", len(issues))
			}
			for _, is := range issues {
				if !strings.HasPrefix(is.Path, "$") || is.Code == "" || is.Message == "" {
					t.Fatalf("malformed issue %+v", is)
				}
			}
			if !reflect.DeepEqual(s, DefaultCaptureSettings()) {
				t.Fatalf("rejected input returned %+v", s)
			}
			return
		}
		for _, list := range [][]string{s.ExecutableRoots, s.WorkingRoots, s.AllowedEnv} {
			if list == nil || len(list) > MaxCaptureListEntries {
				t.Fatalf("accepted list %#v", list)
			}
		}
		for _, p := range append(append([]string{}, s.ExecutableRoots...), s.WorkingRoots...) {
			if code, _ := captureCheckPath(p); code != "" || !WithinRoot(p, p) {
				t.Fatalf("accepted bad path %q", p)
			}
		}
		for _, n := range s.AllowedEnv {
			if !captureEnvNamePattern.MatchString(n) {
				t.Fatalf("accepted bad env name %q", n)
			}
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		again, issues := ParseCaptureSettings(out)
		if issues != nil {
			t.Fatalf("re-parse of %s: %v", out, issues)
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("round trip changed settings: %+v -> %s -> %+v", s, out, again)
		}
		out2, _ := json.Marshal(again)
		if string(out2) != string(out) {
			t.Fatalf("re-marshal differs: %s vs %s", out, out2)
		}
	})
}
