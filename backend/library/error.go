package library

import (
	"errors"
	"fmt"
)

// Kind classifies an Error the way the app's structured errors do; its
// value is the category the app prints.
type Kind string

// Kinds of Error.
const (
	KindInvalid  Kind = "invalid_input" // the bytes or the request are at fault
	KindNotFound Kind = "not_found"     // no such saved Evidence
	KindIO       Kind = "io"            // the file system or the store failed
	KindInternal Kind = "internal"      // Gatehouse's own output failed a check
)

// Error is a library failure: a stable machine-readable Code, its Kind,
// a message for people and, for a verification failure, every failing
// path (Issues, empty otherwise).
type Error struct {
	Code    string
	Kind    Kind
	Message string
	Issues  []Issue
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

func errorf(code string, kind Kind, format string, args ...any) *Error {
	return &Error{Code: code, Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// AsError reports whether err is or wraps an *Error, and returns it.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
