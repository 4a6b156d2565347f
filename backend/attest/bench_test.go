package attest

import (
	"context"
	"testing"
)

// BenchmarkAttest and BenchmarkVerify measure signing and checking one
// attestation (the Evidence verification itself is not included); the
// attested file is the small sealed envelope, so these are the fixed
// costs: the statement, DSSE and Ed25519.
func BenchmarkAttest(b *testing.B) {
	k := keyring(b)
	s, _ := k.Signer()
	e, data := sealed(b, "none")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Attest(context.Background(), s, "ev.json", data, e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	k := keyring(b)
	s, _ := k.Signer()
	e, data := sealed(b, "none")
	att, _ := Attest(context.Background(), s, "ev.json", data, e)
	own, _ := k.Installation()
	b.ReportAllocs()
	for b.Loop() {
		if _, is := Verify(context.Background(), att, data, e, Trust{Installation: own}); len(is) > 0 {
			b.Fatal(is)
		}
	}
}
