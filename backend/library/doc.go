// Package library is the evidence library: the Evidence files saved in a
// data directory's evidence/ folder, their index in the store, and the
// proof that every file entering or leaving it was verified.
//
// It guarantees:
//
//   - Nothing is saved that did not just pass full verification (Check,
//     CheckForSave, CheckParsedForSave make the only Checked values Save
//     accepts), and a save that cannot be indexed leaves no file.
//   - A saved file is returned (Open) only when its exact bytes verify now
//     and hold the id asked for. Bytes that already passed by this
//     executable are recognised by their SHA-256 (an in-memory cache and a
//     verification mark in the store), never by their id or path.
//   - Every failure is an *Error with a stable code and, for verification
//     failures, every failing path; a failure changes nothing.
//
// The package never imports the app or Wails; New takes every dependency
// (the store, the data directory, the verifier's digest, a clock).
package library
