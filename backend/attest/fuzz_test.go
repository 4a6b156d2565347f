package attest

import (
	"context"
	"testing"
)

// FuzzParseAttestation feeds arbitrary bytes to the attestation parser and
// everything after it: the DSSE envelope, the signature check, the
// in-toto statement and its comparison with an Evidence file. None may
// panic; an accepted envelope has the in-toto payload type and 1–16
// signatures, and only the genuine attestation verifies.
func FuzzParseAttestation(f *testing.F) {
	k := keyring(f)
	e, data := sealedF(f)
	s, err := k.Signer()
	if err != nil {
		f.Fatal(err)
	}
	good, err := Attest(context.Background(), s, "ev.json", data, e)
	if err != nil {
		f.Fatal(err)
	}
	own, _ := k.Installation()
	trust := Trust{Installation: own}
	f.Add(good)
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"e30=","signatures":[{"keyid":"","sig":"AA=="}]}`))
	f.Add([]byte(`{"payloadType":"application/vnd.in-toto+json","payload":"eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEifQ==","signatures":[{"sig":"AA=="}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		env, payload, issues := ParseEnvelope(b)
		if len(issues) == 0 {
			if env.PayloadType != PayloadType || len(env.Signatures) < 1 || len(env.Signatures) > maxSignatures {
				t.Fatalf("accepted %+v", env)
			}
			if st, is := ParseStatement(payload); len(is) == 0 {
				CheckStatement(st, data, e)
			}
		}
		res, issues := Verify(context.Background(), b, data, e, trust)
		if len(issues) == 0 && res.Fingerprint != own[0].Fingerprint {
			t.Fatalf("verified with %s", res.Fingerprint)
		}
	})
}
