package attest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// sealed returns a sealed Evidence envelope with a subject and its bytes.
func sealed(t testing.TB, limitation string) (*evidence.Envelope, []byte) {
	t.Helper()
	e := &evidence.Envelope{
		Subject:          &evidence.Subject{Name: "tool", Digest: evidence.SubjectDigest{SHA256: strings.Repeat("ab", 32)}, Format: "elf", Architecture: "amd64"},
		Provider:         evidence.Provider{ID: "test", Name: "test", Version: "1"},
		PredicateType:    "example.test/v1",
		Operation:        "observe",
		Parameters:       json.RawMessage(`{}`),
		NormalizedResult: json.RawMessage(`{"x":1}`),
		Confidence:       evidence.Observed,
		Authority:        evidence.AuthorityControlledReplay,
		Limitations:      []string{limitation},
	}
	if err := evidence.Seal(e); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return e, b
}

func sealedF(f *testing.F) (*evidence.Envelope, []byte) { return sealed(f, "none") }

// keyring opens a fresh keyring (its key made on first use) in a
// temporary directory; a failure ends the test.
func keyring(t testing.TB) *Keyring {
	t.Helper()
	k, err := Open(filepath.Join(t.TempDir(), "signing"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func trustOwn(t *testing.T, k *Keyring) Trust {
	t.Helper()
	own, err := k.Installation()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := k.Trusted()
	if err != nil {
		t.Fatal(err)
	}
	return Trust{Installation: own, Trusted: tr}
}

func attestWith(t *testing.T, k *Keyring, name string, data []byte, e *evidence.Envelope) []byte {
	t.Helper()
	s, err := k.Signer()
	if err != nil {
		t.Fatal(err)
	}
	att, err := Attest(context.Background(), s, name, data, e)
	if err != nil {
		t.Fatal(err)
	}
	return att
}

func wantIssue(t *testing.T, issues []Issue, code, path string) {
	t.Helper()
	for _, is := range issues {
		if is.Code == code && (path == "" || is.Path == path) {
			return
		}
	}
	t.Fatalf("want %s at %q, got %+v", code, path, issues)
}

func TestRoundTrip(t *testing.T) {
	k := keyring(t)
	e, data := sealed(t, "none")
	att := attestWith(t, k, "/some/dir/ev.json", data, e)
	if !bytes.HasSuffix(att, []byte("}\n")) || bytes.Count(att, []byte("\n")) != 1 {
		t.Fatalf("not one JSON line: %q", att)
	}
	res, issues := Verify(context.Background(), att, data, e, trustOwn(t, k))
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	cur, _ := k.Current()
	if res.SignedBy != SignerInstallation || res.Fingerprint != cur.Fingerprint || res.Subject != "ev.json" ||
		res.PredicateType != "example.test/v1" || res.Predicate.EvidenceID != e.EvidenceID {
		t.Fatalf("%+v", res)
	}
	// The statement names both subjects with their sha256.
	env, payload, _ := ParseEnvelope(att)
	if env.PayloadType != PayloadType || env.Signatures[0].KeyID != cur.Fingerprint {
		t.Fatalf("%+v", env)
	}
	var st struct {
		Type    string `json:"_type"`
		Subject []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		PredicateType string `json:"predicateType"`
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != "https://in-toto.io/Statement/v1" || len(st.Subject) != 2 || st.Subject[1].Digest["sha256"] != e.Subject.Digest.SHA256 {
		t.Fatalf("%s", payload)
	}
}

// TestTamperedFails changes one byte at a time from the attacker's side.
func TestTamperedFails(t *testing.T) {
	k := keyring(t)
	e, data := sealed(t, "none")
	att := attestWith(t, k, "ev.json", data, e)
	trust := trustOwn(t, k)
	ctx := context.Background()

	t.Run("evidence byte", func(t *testing.T) {
		changed := bytes.Replace(data, []byte(`"tool"`), []byte(`"tooL"`), 1) // subject.name: outside the evidence_id
		if _, is := evidence.Parse(changed); len(is) > 0 {
			t.Fatal("the changed Evidence should still verify as Evidence:", is)
		}
		_, issues := Verify(ctx, att, changed, e, trust)
		wantIssue(t, issues, CodeSubjectMismatch, "$.payload.subject")
	})
	env, payload, _ := ParseEnvelope(att)
	reencode := func(p []byte, sig []byte) []byte {
		c := *env
		c.Signatures = append([]dsse.Signature(nil), env.Signatures...)
		if p != nil {
			c.Payload = base64.StdEncoding.EncodeToString(p)
		}
		if sig != nil {
			c.Signatures[0].Sig = base64.StdEncoding.EncodeToString(sig)
		}
		b, _ := json.Marshal(c)
		return b
	}
	t.Run("statement byte", func(t *testing.T) {
		p := bytes.Replace(payload, []byte(`"observe"`), []byte(`"observf"`), 1)
		if bytes.Equal(p, payload) {
			t.Fatal("no change")
		}
		_, issues := Verify(ctx, reencode(p, nil), data, e, trust)
		wantIssue(t, issues, CodeSignatureInvalid, "$.signatures[0].sig")
	})
	t.Run("signature byte", func(t *testing.T) {
		sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
		sig[10] ^= 1
		_, issues := Verify(ctx, reencode(nil, sig), data, e, trust)
		wantIssue(t, issues, CodeSignatureInvalid, "$.signatures[0].sig")
	})
	t.Run("payload type", func(t *testing.T) {
		b := bytes.Replace(att, []byte(PayloadType), []byte("application/json"), 1)
		_, issues := Verify(ctx, b, data, e, trust)
		wantIssue(t, issues, CodePayloadType, "$.payloadType")
	})
	t.Run("another signer", func(t *testing.T) {
		other := keyring(t)
		forged := attestWith(t, other, "ev.json", data, e)
		_, issues := Verify(ctx, forged, data, e, trust)
		wantIssue(t, issues, CodeUntrustedKey, "$.signatures")
		// Once trusted it verifies as "trusted"; given, as "given".
		pub, _ := other.Current()
		if _, err := k.AddTrusted(pub.PEM()); err != nil {
			t.Fatal(err)
		}
		res, issues := Verify(ctx, forged, data, e, trustOwn(t, k))
		if len(issues) > 0 || res.SignedBy != SignerTrusted || res.Fingerprint != pub.Fingerprint {
			t.Fatal(res, issues)
		}
		res, issues = Verify(ctx, forged, data, e, Trust{Given: []PublicKey{pub}})
		if len(issues) > 0 || res.SignedBy != SignerGiven {
			t.Fatal(res, issues)
		}
		if ok, err := k.RemoveTrusted(pub.Fingerprint); !ok || err != nil {
			t.Fatal(ok, err)
		}
		_, issues = Verify(ctx, forged, data, e, trustOwn(t, k))
		wantIssue(t, issues, CodeUntrustedKey, "$.signatures")
	})
	t.Run("rehashed forgery", func(t *testing.T) {
		e2, forged := sealed(t, "forged")
		if e2.EvidenceID == e.EvidenceID {
			t.Fatal("same id")
		}
		_, issues := Verify(ctx, att, forged, e2, trust)
		wantIssue(t, issues, CodeSubjectMismatch, "$.payload.subject")
		wantIssue(t, issues, CodePredicateMismatch, "$.payload.predicate.evidence_id")
	})
	t.Run("malformed", func(t *testing.T) {
		for name, b := range map[string]string{
			"not json":       `{`,
			"unknown field":  strings.Replace(string(att), `"payloadType"`, `"extra":1,"payloadType"`, 1),
			"duplicate":      strings.Replace(string(att), `"payloadType"`, `"payload":"","payloadType"`, 1),
			"no signatures":  `{"payloadType":"` + PayloadType + `","payload":"e30=","signatures":[]}`,
			"bad base64 sig": `{"payloadType":"` + PayloadType + `","payload":"e30=","signatures":[{"keyid":"","sig":"!!"}]}`,
			"bad payload":    `{"payloadType":"` + PayloadType + `","payload":"e30","signatures":[{"keyid":"","sig":"AA=="}]}`,
			"two values":     string(att) + "{}",
		} {
			if _, _, is := ParseEnvelope([]byte(b)); len(is) == 0 || is[0].Code != CodeMalformed {
				t.Errorf("%s: %+v", name, is)
			}
		}
		big := make([]byte, MaxAttestationBytes+1)
		if _, _, is := ParseEnvelope(big); len(is) != 1 || is[0].Code != CodeTooLarge {
			t.Errorf("too large: %+v", is)
		}
	})
	t.Run("hostile keyid", func(t *testing.T) {
		c := *env
		c.Signatures = []dsse.Signature{{KeyID: "\x1b]0;owned\x07\x1b[31mSHA256:evil", Sig: env.Signatures[0].Sig}}
		b, _ := json.Marshal(c)
		_, issues := Verify(ctx, b, data, e, trust)
		wantIssue(t, issues, CodeUntrustedKey, "$.signatures")
		if strings.ContainsAny(issues[0].Message, "\x1b\x07") || !strings.Contains(issues[0].Message, `keyid "\x1b]0;owned\a\x1b[31mSHA256:evil"`) {
			t.Fatalf("control characters reach the message: %q", issues[0].Message)
		}
		sum := sha256.Sum256(data)
		if _, who, _ := VerifyDigest(ctx, b, hex.EncodeToString(sum[:]), e.EvidenceID, trust); who != "" {
			t.Fatalf("untrusted text named as the signer: %q", who)
		}
	})
	t.Run("signed non-statement", func(t *testing.T) {
		s, _ := k.Signer()
		es, _ := dsse.NewEnvelopeSigner(s)
		de, _ := es.SignPayload(ctx, PayloadType, []byte(`{"_type":"https://in-toto.io/Statement/v0.1"}`))
		b, _ := json.Marshal(de)
		_, issues := Verify(ctx, b, data, e, trust)
		wantIssue(t, issues, CodeStatementInvalid, "$.payload")
	})
}

func TestKeyFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "signing")
	k, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := k.Installation(); len(l) != 0 {
		t.Fatal("a key exists before first use")
	}
	pub, err := k.Current()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(k.PrivateKeyPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v %v", fi.Mode(), err)
	}
	di, _ := os.Lstat(dir)
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v", di.Mode())
	}
	// The same key on every open.
	k2, _ := Open(dir)
	if p2, _ := k2.Current(); p2.Fingerprint != pub.Fingerprint {
		t.Fatal("a second open made another key")
	}
	// A readable key file is refused, never fixed.
	os.Chmod(k.PrivateKeyPath(), 0o644)
	if _, err := k.Signer(); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("mode 0644 accepted: %v", err)
	}
	if fi, _ := os.Lstat(k.PrivateKeyPath()); fi.Mode().Perm() != 0o644 {
		t.Fatal("the mode was silently fixed")
	}
	os.Chmod(k.PrivateKeyPath(), 0o600)
	// A symlink in its place is refused.
	real := filepath.Join(t.TempDir(), "k")
	os.Rename(k.PrivateKeyPath(), real)
	os.Symlink(real, k.PrivateKeyPath())
	if _, err := k.Signer(); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("symlink accepted: %v", err)
	}
	// An open directory is refused.
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o755)
	if _, err := Open(open); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("open dir accepted: %v", err)
	}
	// The PEM export parses back to the same key; an SSH-style fingerprint.
	p, err := ParsePublicKeyPEM(pub.PEM())
	if err != nil || p.Fingerprint != pub.Fingerprint || !strings.HasPrefix(p.Fingerprint, "SHA256:") || len(p.Fingerprint) != 50 {
		t.Fatal(p, err)
	}
	for _, bad := range []string{"", "junk", string(pub.PEM()) + string(pub.PEM()),
		"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"} {
		if _, err := ParsePublicKeyPEM([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if _, err := k2.AddTrusted(pub.PEM()); err == nil {
		t.Error("the installation's own key was added as trusted")
	}
}

func TestFirstUseConcurrent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "signing")
	var wg sync.WaitGroup
	fps := make([]string, 8)
	for i := range fps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := Open(dir) // one Keyring each, as separate processes would
			if err != nil {
				t.Error(err)
				return
			}
			p, err := k.Current()
			if err != nil {
				t.Error(err)
				return
			}
			fps[i] = p.Fingerprint
		}()
	}
	wg.Wait()
	for _, fp := range fps {
		if fp != fps[0] {
			t.Fatalf("two first keys: %v", fps)
		}
	}
	k, _ := Open(dir)
	if l, _ := k.Installation(); len(l) != 1 {
		t.Fatalf("%d installation keys listed", len(l))
	}
}

func TestRotateKeepsOldKeys(t *testing.T) {
	k := keyring(t)
	e, data := sealed(t, "none")
	old := attestWith(t, k, "ev.json", data, e)
	oldPub, _ := k.Current()
	newPub, err := k.Rotate()
	if err != nil || newPub.Fingerprint == oldPub.Fingerprint {
		t.Fatal(newPub, err)
	}
	fresh := attestWith(t, k, "ev.json", data, e)
	l, _ := k.Installation()
	if len(l) != 2 || l[0].Fingerprint != newPub.Fingerprint {
		t.Fatalf("%+v", l)
	}
	for _, att := range [][]byte{old, fresh} {
		res, issues := Verify(context.Background(), att, data, e, trustOwn(t, k))
		if len(issues) > 0 || res.SignedBy != SignerInstallation {
			t.Fatal(res, issues)
		}
	}
	// The old private key is gone: the key file holds the new one only.
	s, _ := k.Signer()
	if s.Public().Fingerprint != newPub.Fingerprint {
		t.Fatal("signing with the old key after rotation")
	}
}
