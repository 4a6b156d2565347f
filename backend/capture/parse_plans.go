package capture

import (
	"regexp"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// DefaultLimits returns the limits of a scenario that sets none.
func DefaultLimits() Limits {
	return Limits{
		OutputBytes: 1_000_000, Frames: 10_000, Files: 10_000, FileBytes: 10_000_000,
		Processes: 1000, ProtocolEvents: 10_000, ProtocolBodyBytes: 1_000_000,
		Connections: 100, FilesystemDepth: 16,
	}
}

func (c *checker) limits(m strictjson.Members) Limits {
	l := DefaultLimits()
	v, ok := m["limits"]
	if !ok {
		return l
	}
	fields := []struct {
		key string
		max int
		dst *int
	}{
		{"output_bytes", 10_000_000, &l.OutputBytes},
		{"frames", 100_000, &l.Frames},
		{"files", 100_000, &l.Files},
		{"file_bytes", 100_000_000, &l.FileBytes},
		{"processes", 10_000, &l.Processes},
		{"protocol_events", 100_000, &l.ProtocolEvents},
		{"protocol_body_bytes", 10_000_000, &l.ProtocolBodyBytes},
		{"connections", 1000, &l.Connections},
		{"filesystem_depth", 64, &l.FilesystemDepth},
	}
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = f.key
	}
	lm, ok := c.object(v, "$.limits", keys...)
	if !ok {
		return l
	}
	for _, f := range fields {
		*f.dst, _ = c.IntField(lm, "$.limits", f.key, 1, f.max, *f.dst)
	}
	return l
}

func (c *checker) normalization(m strictjson.Members) Normalization {
	n := Normalization{Paths: true, PIDs: true, Ports: true, TimeBucketMS: 10, Patterns: []Pattern{}}
	v, ok := m["normalization"]
	if !ok {
		return n
	}
	nm, ok := c.object(v, "$.normalization", "paths", "pids", "ports", "time_bucket_ms", "patterns")
	if !ok {
		return n
	}
	const at = "$.normalization"
	n.Paths = c.boolField(nm, at, "paths", true)
	n.PIDs = c.boolField(nm, at, "pids", true)
	n.Ports = c.boolField(nm, at, "ports", true)
	n.TimeBucketMS, _ = c.IntField(nm, at, "time_bucket_ms", 1, MaxTimeBucketMS, 10)
	c.listField(nm, at, "patterns", 0, MaxPatterns, func(_ int, e *strictjson.Node, pat string) {
		pm, ok := c.object(e, pat, "pattern", "replacement")
		if !ok {
			return
		}
		var p Pattern
		if s, ok := c.ReqStr(pm, pat, "pattern"); ok && c.length(s, pat+".pattern", 1, MaxPatternChars) {
			if _, err := regexp.Compile(s); err != nil {
				c.Add(pat+".pattern", CodeInvalidPattern, "not a valid regular expression: %s", strictjson.Truncate(err.Error(), 200))
			}
			p.Pattern = s
		}
		if s, ok := c.ReqStr(pm, pat, "replacement"); ok && c.length(s, pat+".replacement", 0, MaxReplacementChars) {
			p.Replacement = s
		}
		n.Patterns = append(n.Patterns, p)
	})
	return n
}
