package evidence

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCommitAndVerify(t *testing.T) {
	v := map[string]any{"paths": true, "pids": true, "ports": true, "time_bucket_ms": 10, "patterns": []any{}}
	c, err := Commit(v)
	if err != nil {
		t.Fatal(err)
	}
	if c != (Commitment{AlgorithmSHA256, digestNormalization}) {
		t.Fatalf("Commit = %+v", c)
	}
	if err := Verify(v, c); err != nil {
		t.Fatalf("Verify(own commitment) = %v", err)
	}
	reordered := []byte(`{"patterns":[],"time_bucket_ms":10,"ports":true,"pids":true,"paths":true}`)
	if cj, err := CommitJSON(reordered); err != nil || cj != c {
		t.Fatalf("CommitJSON(reordered) = %+v, %v; want %+v", cj, err, c)
	}
	if err := VerifyJSON(reordered, c); err != nil {
		t.Fatalf("VerifyJSON(reordered) = %v", err)
	}
	b, _ := json.Marshal(c)
	if string(b) != `{"algorithm":"sha256","digest":"`+digestNormalization+`"}` {
		t.Fatalf("Commitment JSON = %s", b)
	}

	v["time_bucket_ms"] = 11
	err = Verify(v, c)
	if !errors.Is(err, ErrCommitmentMismatch) {
		t.Fatalf("Verify(changed) = %v; want ErrCommitmentMismatch", err)
	}
	if !strings.Contains(err.Error(), digestNormalization) {
		t.Errorf("mismatch error lacks the committed digest: %v", err)
	}
	if err := VerifyJSON([]byte(`{}`), c); !errors.Is(err, ErrCommitmentMismatch) {
		t.Fatalf("VerifyJSON(other) = %v; want ErrCommitmentMismatch", err)
	}
}

func TestVerifyRejectsMalformedCommitments(t *testing.T) {
	bad := []Commitment{
		{},
		{"SHA256", digestEmptyObject},
		{"sha512", digestEmptyObject},
		{AlgorithmSHA256, strings.ToUpper(digestEmptyObject)},
		{AlgorithmSHA256, digestEmptyObject[:63]},
		{AlgorithmSHA256, digestEmptyObject + "0"},
		{AlgorithmSHA256, "g" + digestEmptyObject[1:]},
	}
	for _, c := range bad {
		err := Verify(map[string]any{}, c)
		if err == nil || errors.Is(err, ErrCommitmentMismatch) {
			t.Errorf("Verify with %+v = %v; want a malformed-commitment error", c, err)
		}
		if err := VerifyJSON([]byte(`{}`), c); err == nil || errors.Is(err, ErrCommitmentMismatch) {
			t.Errorf("VerifyJSON with %+v = %v; want a malformed-commitment error", c, err)
		}
	}
	good := Commitment{AlgorithmSHA256, digestEmptyObject}
	if err := Verify(func() {}, good); err == nil || errors.Is(err, ErrCommitmentMismatch) {
		t.Errorf("Verify(func) = %v; want an encoding error", err)
	}
	if err := VerifyJSON([]byte(`{`), good); err == nil || errors.Is(err, ErrCommitmentMismatch) {
		t.Errorf("VerifyJSON(invalid) = %v; want a canonicalization error", err)
	}
	if _, err := Commit(func() {}); err == nil {
		t.Error("Commit(func) succeeded")
	}
	if _, err := CommitJSON([]byte(`{"a":1,"a":1}`)); err == nil {
		t.Error("CommitJSON(duplicate keys) succeeded")
	}
}
