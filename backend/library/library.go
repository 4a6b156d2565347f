package library

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/contentcache"
	"github.com/gatehouse/gatehouse/backend/store"
)

// Config is what a Library depends on.
type Config struct {
	// DB is the store holding the index and the verification marks.
	DB *store.DB
	// DataDir is the data directory; files live in DataDir/evidence/.
	DataDir string
	// Verifier returns the digest of the code that verifies (see
	// ExecutableDigest); "" turns verification marks off, so every read
	// is verified in full. Nil means "".
	Verifier func() string
	// Now is the clock of CreatedAt; nil means time.Now.
	Now func() time.Time
	// Warnings receives one line per verification that could not be
	// remembered (it costs a full verification later); nil discards them.
	Warnings io.Writer
}

// Library is the evidence library of one data directory. It is safe for
// concurrent use; Wait ends its background work.
type Library struct {
	db       *store.DB
	dataDir  string
	verifier func() string
	now      func() time.Time
	warn     io.Writer

	verified *contentcache.Cache[[32]byte, Result]          // results of verifications that passed, by digest
	proofs   *contentcache.Cache[[32]byte, record.Verified] // their records' proofs (capture.go)
	pre      preverifier                                    // background verification of unmarked files
}

// New returns the library described by c.
func New(c Config) *Library {
	l := &Library{db: c.DB, dataDir: c.DataDir, verifier: c.Verifier, now: c.Now, warn: c.Warnings,
		verified: contentcache.New[[32]byte, Result](contentcache.Limits{MaxEntries: verifiedCacheSize}), proofs: newProofCache()}
	if l.verifier == nil {
		l.verifier = func() string { return "" }
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.warn == nil {
		l.warn = io.Discard
	}
	return l
}

// FilePath is where the Evidence id lives: <dataDir>/evidence/<id>.json.
// Callers check id with evidence.ValidID first, so it cannot leave the
// folder.
func FilePath(dataDir, id string) string {
	return filepath.Join(dataDir, "evidence", id+".json")
}

// Path is FilePath in this library's data directory.
func (l *Library) Path(id string) string { return FilePath(l.dataDir, id) }

// Save saves the checked Evidence as its file (mode 0600, atomically) and
// indexes it with e's predicate, operation and summary; EvidenceID is the
// checked one, and Path, Size and CreatedAt are set here. If indexing
// fails the saved file is removed, so nothing is left half-saved. The
// file is then marked verified (MarkNamespace) by the SHA-256 of the exact
// bytes written and the verifier, so opening it later costs a hash,
// whichever path saved it. It returns the entry as indexed. A Checked
// that no check made is refused.
func (l *Library) Save(ctx context.Context, e store.EvidenceEntry, c Checked) (store.EvidenceEntry, error) {
	if c.data == nil || c.res.EvidenceID == "" {
		return store.EvidenceEntry{}, errorf("internal", KindInternal, "refusing to save Evidence that was not verified")
	}
	e.EvidenceID = c.res.EvidenceID
	path, err := writeFile(l.dataDir, e.EvidenceID, c.data)
	if err != nil {
		return store.EvidenceEntry{}, err
	}
	return l.index(ctx, e, c, path)
}

// index indexes the checked Evidence c saved at path with e's predicate,
// operation and summary, removing the file when indexing fails, then
// marks it verified (Save).
func (l *Library) index(ctx context.Context, e store.EvidenceEntry, c Checked, path string) (store.EvidenceEntry, error) {
	e.EvidenceID = c.res.EvidenceID
	e.Path, e.Size, e.CreatedAt = path, int64(len(c.data)), l.now()
	if err := l.db.IndexEvidence(ctx, e); err != nil {
		os.Remove(path) // nothing half-saved
		return store.EvidenceEntry{}, errorf("evidence_not_indexed", KindIO, "%v", err)
	}
	l.MarkVerified(ctx, c.sum, c.res)
	l.keepProof(c.sum, c.res.record)
	return e, nil
}

// writeFile writes data as FilePath(dataDir, id) (mode 0600, atomically)
// and returns the path.
func writeFile(dataDir, id string, data []byte) (string, error) {
	tmp, err := writeTemp(dataDir, id, data)
	if err != nil {
		return "", err
	}
	return publish(dataDir, id, tmp)
}

// writeTemp writes data, synced to disk, as a new temporary file (mode
// 0600) in the folder of FilePath(dataDir, id), which publish renames to
// its name: a temporary file is never read as Evidence.
func writeTemp(dataDir, id string, data []byte) (string, error) {
	if !evidence.ValidID(id) {
		return "", errorf("internal", KindInternal, "refusing to save Evidence under the id %q", id)
	}
	dir := filepath.Dir(FilePath(dataDir, id))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", errorf("evidence_not_saved", KindIO, "%v", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-"+id+"-*") // created with mode 0600
	if err != nil {
		return "", errorf("evidence_not_saved", KindIO, "%v", err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync() // the bytes are on disk before the name points to them
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", errorf("evidence_not_saved", KindIO, "%v", err)
	}
	return tmp, nil
}

// publish renames the temporary file tmp (writeTemp) to id's name and
// returns its path; the temporary file is removed when it cannot be.
func publish(dataDir, id, tmp string) (string, error) {
	path := FilePath(dataDir, id)
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", errorf("evidence_not_saved", KindIO, "%v", err)
	}
	return path, nil
}

// Find returns the index entry of id: error invalid_arguments when id
// is not an evidence id, evidence_not_found when there is none, a
// database error otherwise.
func (l *Library) Find(ctx context.Context, id string) (store.EvidenceEntry, error) {
	if err := checkID(id); err != nil {
		return store.EvidenceEntry{}, err
	}
	e, err := l.db.GetEvidence(ctx, id)
	if err != nil {
		return store.EvidenceEntry{}, storeError(id, err)
	}
	return e, nil
}

// checkID refuses what is not an evidence id (evidence.ValidID: ev_ and
// 64 lowercase hex digits), so no id can name a file outside the folder
// or an entry it does not own. The app checks ids at its faces first;
// this is the library's own guard.
func checkID(id string) error {
	if evidence.ValidID(id) {
		return nil
	}
	return &Error{Code: "invalid_arguments", Kind: KindInvalid,
		Issues:  []Issue{{Code: "invalid_value", Path: "$.id", Message: "an evidence id is ev_ followed by 64 lowercase hex digits"}},
		Message: "not an evidence id"}
}

// storeError is the library error for a store error about the index
// entry of id: evidence_not_found, or a database error.
func storeError(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Code: "evidence_not_found", Kind: KindNotFound, Message: fmt.Sprintf("no saved Evidence %s", id)}
	}
	return errorf("database", KindIO, "%v", err)
}

// Opened is one saved Evidence as read and verified just now.
type Opened struct {
	Entry store.EvidenceEntry
	// Data is the file's exact bytes, Sum their SHA-256.
	Data []byte
	Sum  [32]byte
	// Result is what their verification found; its EvidenceID is the id
	// asked for.
	Result Result
}

// Open reads the saved Evidence id (anything but an evidence id is
// invalid_arguments, before any file is touched) and verifies the bytes
// read (VerifySavedSum). A file that no longer
// verifies, or holds another id, is never returned: the error (code
// evidence_integrity_mismatch) lists every failing path. A missing file
// is evidence_not_found.
func (l *Library) Open(ctx context.Context, id string) (Opened, error) {
	entry, err := l.Find(ctx, id)
	if err != nil {
		return Opened{}, err
	}
	data, err := ReadBounded(l.Path(id), evidence.MaxEnvelopeBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return Opened{}, &Error{Code: "evidence_not_found", Kind: KindNotFound,
			Message: fmt.Sprintf("the file of %s is missing from the data directory", id)}
	}
	if err != nil {
		return Opened{}, err
	}
	o := Opened{Entry: entry, Data: data, Sum: sum256(data)}
	res, issues := l.VerifySavedSum(ctx, id, data, o.Sum)
	if len(issues) == 0 && res.EvidenceID != id {
		issues = []Issue{{Code: "evidence_id_mismatch", Path: "$.evidence_id",
			Message: fmt.Sprintf("the file saved as %s holds %s", id, res.EvidenceID)}}
	}
	if len(issues) > 0 {
		return Opened{}, &Error{Code: "evidence_integrity_mismatch", Kind: KindInvalid, Issues: issues,
			Message: fmt.Sprintf("the saved Evidence %s no longer verifies: %d failing path(s)", id, len(issues))}
	}
	o.Result = res
	return o, nil
}

// Delete removes the saved Evidence id (anything but an evidence id is
// invalid_arguments, before any file is touched): its file first, so a
// failure leaves the entry (and a retry works), then its index entry and
// its verification mark. An unknown id is evidence_not_found and changes
// nothing. beforeFile, when set, runs first (the app removes files kept
// next to the Evidence); its error stops the deletion.
func (l *Library) Delete(ctx context.Context, id string, beforeFile func() error) error {
	if _, err := l.Find(ctx, id); err != nil {
		return err
	}
	if beforeFile != nil {
		if err := beforeFile(); err != nil {
			return err
		}
	}
	if err := os.Remove(l.Path(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errorf("evidence_not_deleted", KindIO, "%v", err)
	}
	if err := l.db.DeleteEvidence(ctx, id); err != nil {
		return errorf("database", KindIO, "%v", err)
	}
	if err := l.ForgetMark(ctx, id); err != nil {
		return errorf("database", KindIO, "%v", err)
	}
	return nil
}

// SetShared records whether the person shares the saved Evidence id with
// agents and returns its entry after the change. An unknown id is
// evidence_not_found.
func (l *Library) SetShared(ctx context.Context, id string, shared bool) (store.EvidenceEntry, error) {
	if err := checkID(id); err != nil {
		return store.EvidenceEntry{}, err
	}
	if err := l.db.SetEvidenceShared(ctx, id, shared); err != nil {
		return store.EvidenceEntry{}, storeError(id, err)
	}
	return l.Find(ctx, id)
}

// ReadBounded reads a regular file of at most max bytes: a larger file
// is error evidence_integrity_mismatch, read no further than one byte
// past max; a missing file is the os error (errors.Is fs.ErrNotExist).
// Anything else in its place (a FIFO, a device, a directory, also behind
// a symlink) is evidence_integrity_mismatch, and is opened without
// blocking, so a FIFO with no writer cannot hang the read.
func ReadBounded(path string, max int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO for reading otherwise waits for a
	// writer; it changes nothing for a regular file.
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil {
		return nil, errorf("evidence_unreadable", KindIO, "%v", err)
	} else if !fi.Mode().IsRegular() {
		return nil, &Error{Code: "evidence_integrity_mismatch", Kind: KindInvalid,
			Message: fmt.Sprintf("%s is not a regular file (%s)", filepath.Base(path), fi.Mode().Type())}
	}
	b, err := io.ReadAll(io.LimitReader(fh, max+1))
	if err != nil {
		return nil, errorf("evidence_unreadable", KindIO, "%v", err)
	}
	if int64(len(b)) > max {
		return nil, &Error{Code: "evidence_integrity_mismatch", Kind: KindInvalid,
			Message: fmt.Sprintf("%s is larger than %d bytes", filepath.Base(path), max)}
	}
	return b, nil
}

// Wait waits for background verification (Preverify) to end; cancel the
// context given to Preverify first to end it early.
func (l *Library) Wait() { l.pre.wg.Wait() }

// saveSealed checks and saves Evidence Gatehouse has just sealed with the
// id want: data are its bytes, parsed their parse (evidence.SealParsed)
// and ahead the check of its record started ahead (CheckRecordAhead; nil
// checks the record here). It is CheckParsedForSaveAhead followed by
// Save, except that the file is written and synced to disk while the
// bytes are checked, and only once the check has passed is the file
// renamed to its name and indexed. When the check fails the temporary
// file is removed and the error is the check's
// (evidence_integrity_mismatch): nothing is saved, as with Save.
//
// data must not change until saveSealed returns (parsed shares it, as
// evidence.SealParsed says): the parse checked, the digest marked and the
// file written are then all of the same bytes, without the 10 MB copy
// CheckParsedForSaveAhead takes for a Checked saved later (a copy of
// fresh memory cost ~9 ms in a capture-process run). Once it has
// returned, the file is written and data may change.
func (l *Library) saveSealed(ctx context.Context, e store.EvidenceEntry, data []byte, parsed *evidence.Envelope, want string, ahead *RecordCheck) (store.EvidenceEntry, Checked, error) {
	if parsed == nil {
		return store.EvidenceEntry{}, Checked{}, errorf("internal", KindInternal, "the sealed Evidence %s has no parse to verify", want)
	}
	return l.saveStaged(ctx, e, data, parsed, want, ahead, l.stage(want, data), digestOf(data))
}

// SealAndSave seals env as Evidence (evidence.SealParsedStaged) and saves
// it as saveSealed does, with the file written and synced from the
// moment the seal has written the bytes, while the seal checks them and
// the record's check (ahead, as for saveSealed) finishes: the sync then
// overlaps the checks instead of following them. Nothing is saved under
// the Evidence's name unless the seal's check and the check for saving
// both pass; otherwise the temporary file is removed. It returns the
// entry as indexed and the sealed bytes (which must not be modified).
func (l *Library) SealAndSave(ctx context.Context, e store.EvidenceEntry, env *evidence.Envelope, ahead *RecordCheck) (store.EvidenceEntry, []byte, error) {
	var written <-chan staged
	var sum <-chan [sha256.Size]byte
	var want string
	out, parsed, err := evidence.SealParsedStaged(env, func(id string, b []byte) {
		// the file and the digest of its bytes (the verification mark's)
		// are made while the seal checks them
		want, written, sum = id, l.stage(id, b), digestOf(b)
	})
	if err != nil {
		if written != nil {
			discard(<-written)
		}
		return store.EvidenceEntry{}, nil, errorf("evidence_not_sealed", KindInternal, "the Evidence cannot be sealed: %v", err)
	}
	if written == nil { // cannot happen: a seal that returns bytes wrote them
		return store.EvidenceEntry{}, nil, errorf("internal", KindInternal, "the sealed Evidence %s was not staged", parsed.EvidenceID)
	}
	saved, _, err := l.saveStaged(ctx, e, out, parsed, want, ahead, written, sum)
	if err != nil {
		return store.EvidenceEntry{}, nil, err
	}
	return saved, out, nil
}

// staged is the outcome of stage: the temporary file written, or why not.
type staged struct {
	tmp string
	err error
}

// stage writes data as id's temporary file (writeTemp) in its own
// goroutine.
func (l *Library) stage(id string, data []byte) <-chan staged {
	ch := make(chan staged, 1)
	go func() {
		tmp, err := writeTemp(l.dataDir, id, data)
		ch <- staged{tmp, err}
	}()
	return ch
}

// discard removes what stage wrote.
func discard(w staged) {
	if w.err == nil {
		os.Remove(w.tmp)
	}
}

// saveStaged checks data for saving as want (checkParsedDigest, its
// digest from sum) while stage writes it, then publishes and indexes the
// file, or removes it when the check fails.
func (l *Library) saveStaged(ctx context.Context, e store.EvidenceEntry, data []byte, parsed *evidence.Envelope, want string, ahead *RecordCheck, written <-chan staged, sum <-chan [sha256.Size]byte) (store.EvidenceEntry, Checked, error) {
	c, err := checkParsedDigest(data, parsed, want, ahead, sum)
	w := <-written
	switch {
	case err != nil:
		discard(w)
		return store.EvidenceEntry{}, Checked{}, err
	case w.err != nil:
		return store.EvidenceEntry{}, Checked{}, w.err
	}
	path, err := publish(l.dataDir, want, w.tmp)
	if err != nil {
		return store.EvidenceEntry{}, Checked{}, err
	}
	saved, err := l.index(ctx, e, c, path)
	if err != nil {
		return store.EvidenceEntry{}, Checked{}, err
	}
	return saved, c, nil
}
