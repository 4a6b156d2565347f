package library

import (
	"bytes"

	"github.com/gatehouse/gatehouse/backend/capture/record"
)

// RecordCheck is the record check (record.Check, which reports
// record.Verify's issues and makes the proof compare reads) of a capture record's
// bytes started ahead of the seal that will hold them (CheckRecordAhead),
// so that on a machine with a core to spare the check and the seal run
// side by side. CheckParsedForSaveAhead uses its issues only for an
// envelope whose normalized result is exactly these bytes: record.Verify
// is a pure function of them, so its issues are those of the bytes the
// seal wrote; for any other envelope the record is checked again.
type RecordCheck struct {
	raw    []byte
	done   chan struct{}
	proof  record.Verified
	issues []record.Issue
}

// CheckRecordAhead starts record.Check of raw in its own goroutine. raw
// must not change until the check is used (CheckParsedForSaveAhead) or
// dropped; a check that is dropped still runs to its end.
func CheckRecordAhead(raw []byte) *RecordCheck {
	c := &RecordCheck{raw: raw, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.proof, c.issues = record.Check(raw)
	}()
	return c
}

// checkFor returns the check's proof and issues, waiting for them, when
// raw is byte for byte the bytes it checks; ok is false otherwise (and for
// a nil check).
func (c *RecordCheck) checkFor(raw []byte) (proof record.Verified, issues []record.Issue, ok bool) {
	if c == nil || !bytes.Equal(c.raw, raw) {
		return record.Verified{}, nil, false
	}
	<-c.done
	return c.proof, c.issues, true
}
