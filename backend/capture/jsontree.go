package capture

import "github.com/gatehouse/gatehouse/backend/internal/strictjson"

// scenarioJSON decodes a scenario into a strictjson.Node tree, keeping
// every member in document order (duplicates included, so the checks can
// name them), reporting duplicate member names, unpaired surrogate escapes
// and numbers that RFC 8785 cannot keep exactly (these leave the tree
// usable), and syntax errors and nesting beyond MaxDepth (these stop
// decoding).
var scenarioJSON = strictjson.Options{
	MaxDepth:       MaxDepth,
	Surrogates:     true,
	ExactNumbers:   true,
	KeepDuplicates: true,
	Wording: strictjson.Wording{
		Detailed: true,
		Trailing: "data follows the scenario object at byte offset %d",
	},
}

// decodeDocument decodes data, which must be valid UTF-8 holding exactly one
// JSON value followed by nothing but whitespace. It returns nil when the
// document is malformed.
func decodeDocument(data []byte, issues *strictjson.Collector) *strictjson.Node {
	return strictjson.Decode(data, "$", scenarioJSON, issues)
}
