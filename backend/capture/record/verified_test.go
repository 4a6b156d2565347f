package record

import (
	"slices"
	"testing"
)

// The zero Verified, the only one another package can make, proves
// nothing.
func TestZeroVerifiedIsNotValid(t *testing.T) {
	var v Verified
	if v.Valid() || v.JSON() != "" || v.Holds(nil) || v.Holds([]byte{}) {
		t.Fatalf("zero Verified: valid %v, json %q, holds(nil) %v", v.Valid(), v.JSON(), v.Holds(nil))
	}
}

// Check proves exactly what Verify accepts, and gives Verify's issues
// (and no proof) for what it refuses.
func TestCheckIsVerify(t *testing.T) {
	good := benchRecord(t, 20, 10)
	v, issues := Check(good)
	if len(issues) > 0 || !v.Valid() || v.JSON() != string(good) || !v.Holds(good) {
		t.Fatalf("good record: valid %v, issues %v", v.Valid(), issues)
	}
	bad := slices.Clone(good)
	bad = append(bad[:len(bad)-1], []byte(`,"extra":1}`)...)
	want := Verify(bad)
	if len(want) == 0 {
		t.Fatal("the broken record verifies")
	}
	v, issues = Check(bad)
	if v.Valid() || !slices.Equal(issues, want) {
		t.Fatalf("broken record: valid %v, issues %v, want %v", v.Valid(), issues, want)
	}
}

// A record changed after Check is not the record its proof holds: the
// proof keeps the verified bytes, and says it does not hold the changed
// ones.
func TestVerifiedKeepsTheVerifiedBytes(t *testing.T) {
	raw := benchRecord(t, 20, 10)
	orig := string(raw)
	v, issues := Check(raw)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	for i := range raw {
		raw[i] = ' ' // the caller's slice, overwritten after the check
	}
	if v.JSON() != orig {
		t.Fatal("the proof's bytes changed with the caller's slice")
	}
	if v.Holds(raw) {
		t.Fatal("the proof claims to hold bytes it never verified")
	}
	if !v.Holds([]byte(orig)) {
		t.Fatal("the proof does not hold the bytes it verified")
	}
}

// Check keeps the memory it handed to Verify as the proof's string, which
// is sound only while Verify never writes to its input: this holds on
// every record of TestVerifyMatchesOracle, valid or broken.
func TestVerifyLeavesItsInputUnchanged(t *testing.T) {
	for i, raw := range oracleInputs(t) {
		in := slices.Clone(raw)
		Verify(in)
		if !slices.Equal(in, raw) {
			t.Fatalf("input %d: Verify changed the bytes it was given", i)
		}
	}
}
