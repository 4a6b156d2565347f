package evidence

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
)

// spliceMin is the size of a normalized result from which encodeEnvelope
// writes it around the rest of the envelope instead of through
// encoding/json.
const spliceMin = 64 << 10

// encodeEnvelope is e as one line of JSON without HTML escaping, ending
// with a newline: the bytes json.Encoder (SetEscapeHTML(false)) writes.
//
// encoding/json re-scans a json.RawMessage to compact it, which for a
// capture's 10 MB normalized_result costs more than the rest of sealing's
// encoding. A large normalized result that is already compact (no
// whitespace outside its strings, which is all compaction removes without
// HTML escaping) is therefore written as it is, around the encoding of
// the envelope with a unique placeholder in its place; any other goes
// through encoding/json. Whether the raw bytes are valid JSON is not
// decided here: SealJSON's check parses the whole result, as
// encoding/json's compaction would have refused it.
func encodeEnvelope(e *Envelope) ([]byte, error) {
	raw := e.NormalizedResult
	if len(raw) < spliceMin || !compactJSON(raw) {
		return encodeJSON(e)
	}
	var nonce [16]byte
	rand.Read(nonce[:]) //nolint:errcheck // crypto/rand.Read never fails
	placeholder := []byte(`"gatehouse-splice-` + hex.EncodeToString(nonce[:]) + `"`)
	e.NormalizedResult = placeholder
	head, err := encodeJSON(e)
	e.NormalizedResult = raw
	if err != nil {
		return nil, err
	}
	at := bytes.Index(head, placeholder)
	if at < 0 || bytes.Index(head[at+1:], placeholder) >= 0 { // cannot happen: the nonce is random
		return encodeJSON(e)
	}
	out := make([]byte, 0, len(head)-len(placeholder)+len(raw))
	out = append(out, head[:at]...)
	out = append(out, raw...)
	return append(out, head[at+len(placeholder):]...), nil
}

func encodeJSON(e *Envelope) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// compactJSON reports whether raw has no JSON whitespace outside its
// strings (raw need not be valid JSON). A string ends at the first quote
// after it with an even number of backslashes before it (the escapes pair
// up from the left); the quotes are found with bytes.IndexByte.
func compactJSON(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			for start := i; ; {
				k := bytes.IndexByte(raw[i+1:], '"')
				if k < 0 {
					return true // unterminated: nothing after it is outside a string
				}
				i += 1 + k
				n := 0
				for i-n-1 > start && raw[i-n-1] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		}
	}
	return true
}
