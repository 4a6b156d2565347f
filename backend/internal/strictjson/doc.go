// Package strictjson is the strict JSON reader shared by the scenario
// (capture), replay machine (replay), reactive scenario (reactive),
// asciicast, Evidence envelope (evidence), trace spec (compare), attestation
// (attest) and bundle JSON (bundle: execution.json, schemas, invocations)
// parsers, and the one JSON path syntax and issue type of every Gatehouse
// parser's structured errors.
//
// Node is the one tree of strictly decoded JSON (bundle.Value is Node).
// The only other JSON values in the code are compare's map[string]any /
// []any / json.Number, from its fast lenient decoder of already-verified
// records (backend/compare/jsonparse.go says why it stays); Node.Interface
// converts to that form.
//
// It guarantees that:
//
//   - a document is decoded by a bounded token stream: nesting deeper than
//     Options.MaxDepth and more than Options.MaxValues values stop decoding
//     with an issue, never a panic or unbounded recursion;
//   - exactly one JSON value is accepted, followed by nothing but
//     whitespace; malformed input yields a nil tree and an issue;
//   - objects keep their members in document order in an order-preserving
//     Node tree with no prototype or map semantics, every duplicate member
//     name is reported at its JSON path, numbers keep their literal, and
//     every node records the byte span of its text in the input;
//   - every issue carries a stable code and a JSON path in the one syntax
//     below, built by KeyPath, IndexPath and JoinPath, and a Collector never
//     holds more than its bound, the last issue then being
//     CodeTooManyIssues;
//   - the Checker helpers (objects with allowed keys, string, integer,
//     boolean and array accessors with bounds) report every violation they
//     find and never repair a value;
//   - the lexical checks the readers share (IsHex64, IsName, IsAlnum,
//     FirstInvalidUTF8, Article) and NonNil, which their writers use so a
//     list never encodes as null, have one copy here.
//
// # Paths
//
// Every structured error of every Gatehouse parser names the offending
// value with a JSON path in one syntax, which ParsePath reads back:
//
//	path  = "$" *step
//	step  = "." name        ; name: [A-Za-z_][A-Za-z0-9_]*, at most 64 bytes
//	      / "[" index "]"   ; index: 0 or a decimal without leading zeros
//	      / "[" string "]"  ; any other member name, as a JSON string literal
//
// For example "$", "$.events[3].at_ms", `$.environment["A-B"]`,
// `$.properties["$ref"]`, `$[""]`. In the quoted form, every character
// that is not printable (controls, DEL, C1 controls, bidirectional and
// other format characters, line and paragraph separators) and every
// invalid byte is a \uXXXX escape, so a hostile name can neither move a
// terminal's cursor nor reorder a dialog's text; a name longer than 64
// bytes is cut on a rune boundary and ends in "…" inside the quotes.
//
// Callers choose their own codes, wording and number,
// surrogate, depth and key rules through Options, so that each keeps its
// established, tested contract while sharing one decoder.
package strictjson
