package library

import (
	"github.com/gatehouse/gatehouse/backend/capture/record"
)

// RecordCheck is the record check (record.Check, which reports
// record.Verify's issues and makes the proof compare reads) of a capture
// record's bytes started ahead of the seal that will hold them
// (CheckRecordAhead), so that on a machine with a core to spare the check
// and the seal run side by side. CheckParsedForSaveAhead uses it only for
// an envelope whose normalized result is byte for byte what the check's
// proof holds (its own copy, taken before it verified): record.Verify is a
// pure function of them, so the proof is one of the bytes the seal wrote;
// for any other envelope the record is checked again.
type RecordCheck struct {
	done  chan struct{}
	proof record.Verified
}

// CheckRecordAhead starts record.Check of raw in its own goroutine. A
// change to raw afterwards changes nothing the check decides (record.Check
// copies raw first); a check that is dropped still runs to its end.
func CheckRecordAhead(raw []byte) *RecordCheck {
	c := &RecordCheck{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.proof, _ = record.Check(raw)
	}()
	return c
}

// checkFor returns the check's proof, waiting for it, when the check
// passed and its proof holds raw byte for byte; ok is false otherwise
// (and for a nil check), and raw is then checked itself. The proof's
// own copy of the bytes it verified decides, not the caller's slice: a
// slice changed after the check would otherwise lend its proof to other
// bytes (TestCheckAheadIsOfTheBytesItChecked). A check that found issues
// is not reused either: checking the bytes again gives their issues.
func (c *RecordCheck) checkFor(raw []byte) (proof record.Verified, issues []record.Issue, ok bool) {
	if c == nil {
		return record.Verified{}, nil, false
	}
	<-c.done
	if !c.proof.Holds(raw) {
		return record.Verified{}, nil, false
	}
	return c.proof, nil, true
}
