package strictjson

// Options bound one decoding and choose its checks, codes and wording. The
// zero value of every field but MaxDepth keeps the default behaviour, so
// callers set only what their established contract needs.
type Options struct {
	MaxDepth  int // deepest nesting; the root is at depth 1
	MaxValues int // most scalars and containers (not member names); 0 for no limit

	// ScalarDepth applies MaxDepth to scalars as well as to arrays and
	// objects (a scalar inside a container at MaxDepth is too deep).
	ScalarDepth bool
	// Surrogates reports string literals escaping an unpaired UTF-16
	// surrogate (CodeInvalidString), which encoding/json would silently
	// turn into U+FFFD.
	Surrogates bool
	// ExactNumbers reports numbers RFC 8785 would not write back exactly
	// (CodeInexactNumber). Otherwise only numbers outside the double range
	// are reported (CodeInvalidValue).
	ExactNumbers bool
	// LiteralNumbers checks numbers only for JSON syntax: any literal,
	// 1e999 included, is kept as written for the caller to judge. It
	// overrides ExactNumbers.
	LiteralNumbers bool
	// TreeDepth, when above zero, leaves values deeper than it out of the
	// tree: they are checked all the same, but a container at TreeDepth
	// has no Keys, Vals or Elems. Its Off and End still locate its text.
	TreeDepth int
	// KeepDuplicates keeps every member of an object in the tree, repeated
	// names included; otherwise only the first one is kept.
	KeepDuplicates bool
	// ForbiddenKeys are member names reported wherever they occur
	// (CodeForbiddenKey, Wording.Forbidden), such as "__proto__".
	ForbiddenKeys []string
	// RootObject reports a root value other than an object
	// (CodeNotObject, Wording.NotObject) without decoding it further.
	RootObject bool
	Codes      Codes
	Wording    Wording
}

// Codes replaces the codes of some document-level issues; an empty field
// keeps the default.
type Codes struct {
	Truncated string // the input ends inside the value; CodeInvalidJSON
	Trailing  string // data after the value; CodeInvalidJSON
	TooLarge  string // more than MaxValues values; CodeTooLarge
}

// Wording holds the messages of document-level issues.
type Wording struct {
	// Detailed quotes encoding/json's error in syntax messages; otherwise
	// they name only the byte offset.
	Detailed bool
	// Syntax, when set, is the format of every syntax message but EOF,
	// taking the decoder's byte offset and encoding/json's error; it
	// overrides Detailed.
	Syntax    string
	EOF       string // the input ends inside the value; "unexpected end of input" when empty
	Trailing  string // format taking the byte offset of data after the value
	Duplicate string // a repeated member name; "member name appears more than once in this object" when empty
	// DuplicateFormat, when set, is the format of the duplicate message,
	// taking the repeated name; it overrides Duplicate.
	DuplicateFormat string
	Number          string // a number outside the double range; "number is outside the range of an IEEE-754 double" when empty
	NotObject       string // a root other than an object (Options.RootObject)
	Forbidden       string // format taking a forbidden member name (Options.ForbiddenKeys)
	TooLarge        string // format taking MaxValues; a default names the limit
	TooDeep         string // too deep a value; a default names the limit
}

func (c Codes) truncated() string { return or(c.Truncated, CodeInvalidJSON) }
func (c Codes) trailing() string  { return or(c.Trailing, CodeInvalidJSON) }
func (c Codes) tooLarge() string  { return or(c.TooLarge, CodeTooLarge) }

func (w Wording) eof() string { return or(w.EOF, "unexpected end of input") }
func (w Wording) duplicate() string {
	return or(w.Duplicate, "member name appears more than once in this object")
}
func (w Wording) number() string {
	return or(w.Number, "number is outside the range of an IEEE-754 double")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
