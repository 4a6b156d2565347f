package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Why a hand-written splitter: encoding/json.Unmarshal into a
// map[string]json.RawMessage or a []json.RawMessage scans its whole input
// twice (checkValid, then the decode that skips each value), and a
// reader walking a 10 MB capture record level by level (the record, its
// frames, each frame) pays that at every level although the document was
// already checked in full. SplitObject and SplitArray only find the
// boundaries of the values, in one pass that jumps from quote to quote.

// SplitObject returns the members of raw, one JSON object, in document
// order: each name decoded as encoding/json decodes it and each value's
// exact text without the whitespace around it, as json.Unmarshal into a
// map[string]json.RawMessage gives them (which keeps the last of
// repeated names; SplitObject returns them all).
//
// raw must be valid JSON (part of a document the caller has checked in
// full, for example by RFC 8785 canonicalization): values are delimited,
// not checked. Structure it cannot follow (an unterminated string or
// container, a missing ':' or ',', trailing data) is an error, and it
// never panics or reads out of bounds, whatever raw holds.
func SplitObject(raw []byte) (names []string, values [][]byte, err error) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return []string{}, [][]byte{}, trailing(raw, i+1)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, nil, fmt.Errorf("expected a member name at offset %d", i)
		}
		end, err := stringEnd(raw, i)
		if err != nil {
			return nil, nil, err
		}
		name, err := memberName(raw[i:end])
		if err != nil {
			return nil, nil, err
		}
		i = skipWS(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, nil, fmt.Errorf("expected ':' at offset %d", i)
		}
		start := skipWS(raw, i+1)
		end, err = valueEnd(raw, start)
		if err != nil {
			return nil, nil, err
		}
		names, values = append(names, name), append(values, raw[start:end:end])
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == '}' {
			return names, values, trailing(raw, i+1)
		}
		return nil, nil, fmt.Errorf("expected ',' or '}' at offset %d", i)
	}
}

// SplitArray returns the elements of raw, one JSON array, each as its
// exact text without the whitespace around it, as json.Unmarshal into a
// []json.RawMessage gives them. raw must be valid JSON, as for
// SplitObject, with the same errors and the same guarantee.
func SplitArray(raw []byte) ([][]byte, error) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, errors.New("not a JSON array")
	}
	i = skipWS(raw, i+1)
	out := [][]byte{}
	if i < len(raw) && raw[i] == ']' {
		return out, trailing(raw, i+1)
	}
	for {
		end, err := valueEnd(raw, i)
		if err != nil {
			return nil, err
		}
		out = append(out, raw[i:end:end])
		i = skipWS(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipWS(raw, i+1)
			continue
		}
		if i < len(raw) && raw[i] == ']' {
			return out, trailing(raw, i+1)
		}
		return nil, fmt.Errorf("expected ',' or ']' at offset %d", i)
	}
}

func skipWS(raw []byte, i int) int {
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	return i
}

func trailing(raw []byte, i int) error {
	if i = skipWS(raw, i); i < len(raw) {
		return fmt.Errorf("data after the value at offset %d", i)
	}
	return nil
}

// stringEnd is the offset just past the string starting at raw[i] (a
// '"'): the first quote after it with an even number of backslashes
// before it.
func stringEnd(raw []byte, i int) (int, error) {
	for j := i + 1; ; {
		k := bytes.IndexByte(raw[j:], '"')
		if k < 0 {
			return 0, fmt.Errorf("unterminated string at offset %d", i)
		}
		q := j + k
		n := 0
		for raw[q-n-1] == '\\' { // stops at raw[i], the opening quote, at the latest
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// memberName decodes the name text (quotes included) as encoding/json
// does; a printable ASCII name without escapes is its own decoding.
func memberName(text []byte) (string, error) {
	plain := true
	for _, c := range text[1 : len(text)-1] {
		if c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return string(text[1 : len(text)-1]), nil
	}
	var s string
	if err := json.Unmarshal(text, &s); err != nil {
		return "", fmt.Errorf("member name: %w", err)
	}
	return s, nil
}

// valueEnd is the offset just past the value starting at raw[i].
func valueEnd(raw []byte, i int) (int, error) {
	if i >= len(raw) {
		return 0, errors.New("unexpected end of JSON")
	}
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				end, err := stringEnd(raw, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unterminated container at offset %d", i)
	}
	j := i
	for j < len(raw) && !isSpace(raw[j]) && raw[j] != ',' && raw[j] != '}' && raw[j] != ']' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("expected a value at offset %d", i)
	}
	return j, nil
}
