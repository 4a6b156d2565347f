package record

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// frontendRecordTS is the viewer's copy of the record's shapes.
var frontendRecordTS = filepath.Join("..", "..", "..", "frontend", "src", "evidence", "record.ts")

// frontendTypes pairs each interface of record.ts with the Go type it
// mirrors. Every exported interface of record.ts must be listed: a new
// interface without its Go type fails the test too.
var frontendTypes = map[string]any{
	"CaptureRecord":        Record{},
	"CaptureManifest":      Manifest{},
	"RawFrame":             Frame{},
	"RenderedFrame":        RenderedFrame{},
	"InteractionEvent":     InteractionEvent{},
	"Exit":                 Exit{},
	"Settlement":           Settlement{},
	"ProcessSample":        ProcessSample{},
	"FilesystemCheckpoint": FilesystemCheckpoint{},
	"FileState":            FileState{},
	"FileEffect":           FileEffect{},
	"ShimEvent":            ShimEvent{},
	"ProtocolEvent":        ProtocolEvent{},
	"ReplayTransition":     ReplayTransition{},
	"JournalEntry":         JournalEntry{},
	"ResidualUnknown":      ResidualUnknown{},
	"Cleanup":              Cleanup{},
	"EvidenceEnvelope":     evidence.Envelope{},
}

// jsonFields are the JSON member names of struct v, sorted.
func jsonFields(v any) []string {
	out := Fields(v)
	sort.Strings(out)
	return out
}

var interfaceStart = regexp.MustCompile(`(?m)^export interface (\w+) \{$`)

// tsInterfaces reads the top-level member names of every exported
// interface of a TypeScript source (members of inline object types are
// not the interface's own). Hand-written rather than a TypeScript parser:
// record.ts declares plain interfaces, one member a line, and a parser
// would pull a Node toolchain into a Go test.
func tsInterfaces(t *testing.T, src string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range interfaceStart.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		depth, line := 1, ""
		var fields []string
		for _, c := range src[m[1]:] {
			if depth == 1 && c == '\n' {
				if k, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "/") && !strings.HasPrefix(k, "*") {
					fields = append(fields, strings.TrimSuffix(strings.TrimSpace(k), "?"))
				}
				line = ""
				continue
			}
			switch c {
			case '{':
				depth++
			case '}':
				depth--
			}
			if depth == 0 {
				break
			}
			if depth == 1 {
				line += string(c)
			}
		}
		if depth != 0 {
			t.Fatalf("interface %s in %s is not closed", name, frontendRecordTS)
		}
		sort.Strings(fields)
		out[name] = fields
	}
	return out
}

// TestFrontendRecordTypesMatchGo fails when a field of the record or its
// envelope is added, removed or renamed on one side only: the viewer's
// interfaces (frontend/src/evidence/record.ts) must have exactly the JSON
// members of the Go types that produce the record.
func TestFrontendRecordTypesMatchGo(t *testing.T) {
	src, err := os.ReadFile(frontendRecordTS)
	if err != nil {
		t.Fatal(err)
	}
	ts := tsInterfaces(t, string(src))
	for name := range ts {
		if _, ok := frontendTypes[name]; !ok {
			t.Errorf("record.ts declares interface %s, which no Go type of the record backs (add it to frontendTypes)", name)
		}
	}
	for name, goType := range frontendTypes {
		got, ok := ts[name]
		if !ok {
			t.Errorf("record.ts has no interface %s (the shape of Go %T)", name, goType)
			continue
		}
		if want := jsonFields(goType); !slices.Equal(got, want) {
			t.Errorf("interface %s has fields %v; Go %T has %v", name, got, goType, want)
		}
	}
}

// TestTSInterfacesReadsNestedTypes checks the reader itself: members of an
// inline object type are not the interface's, and a renamed field shows.
func TestTSInterfacesReadsNestedTypes(t *testing.T) {
	got := tsInterfaces(t, "export interface A {\n  a: number;\n  b: { c: string; d: number };\n  e?: { f: string }[];\n  /** doc */\n}\n")
	if want := []string{"a", "b", "e"}; !slices.Equal(got["A"], want) {
		t.Fatalf("fields %v, want %v", got["A"], want)
	}
}
