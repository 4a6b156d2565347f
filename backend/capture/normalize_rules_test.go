package capture

import (
	"strings"
	"testing"
)

// docs/formats/capture-scenario.md: path normalization replaces the executable with
// <executable>; normalization.patterns apply (in order, to the already
// normalized text); time_bucket_ms buckets recorded times; paths:false
// leaves paths alone but never secrets.
func TestNormalizationPatternsExecutableAndBuckets(t *testing.T) {
	script := `printf '[%s] [%s] id=12345\n' "$0" "$PWD"; sleep 0.2; echo done`
	sc, opts := shScenario(t, script, func(m obj) {
		m["arguments"] = []any{"-c", script, "/bin/sh"} // $0 = the executable
		m["normalization"] = obj{"time_bucket_ms": 7, "patterns": []any{
			obj{"pattern": "id=[0-9]+", "replacement": "id=<n>"},
			obj{"pattern": "<n>|<working-directory>", "replacement": "N"}}}
	})
	rec := capture(t, sc, opts)
	if out := output(rec); !strings.Contains(out, "[<executable>] [N] id=N") {
		t.Errorf("frames %q", out)
	}
	for _, f := range rec.Frames {
		if f.AtMS%7 != 0 {
			t.Errorf("frame at_ms %d is not a multiple of time_bucket_ms 7", f.AtMS)
		}
	}
	for _, s := range rec.ProcessSamples {
		if s.AtMS%7 != 0 {
			t.Errorf("process sample at_ms %d is not bucketed", s.AtMS)
		}
	}
	for _, c := range rec.FilesystemCheckpoints {
		if c.AtMS%7 != 0 {
			t.Errorf("checkpoint %s at_ms %d is not bucketed", c.Name, c.AtMS)
		}
	}
}

// paths:false: the working directory is recorded as is; secrets are still redacted.
func TestPathsFalseStillRedactsSecrets(t *testing.T) {
	sc, opts := shScenario(t, `printf '%s|%s\n' "$PWD" "$SECRET"`, func(m obj) {
		m["environment"] = obj{"PATH": "/usr/bin:/bin", "SECRET": "hunter22"}
		m["secret_aliases"] = []any{"SECRET"}
		m["normalization"] = obj{"paths": false}
	})
	rec := capture(t, sc, opts)
	if out := output(rec); !strings.Contains(out, sc.WorkingDirectory+"|<redacted>") {
		t.Errorf("paths:false frames %q", out)
	}
}
