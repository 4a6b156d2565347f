package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Error categories of the CLI's structured errors.
const (
	CategoryUsage    = "usage"
	CategoryNotFound = "not_found"
	CategoryInvalid  = "invalid_input"
	CategoryIO       = "io"
	CategoryInternal = "internal"
	// CategoryUnavailable is a request refused because Gatehouse is
	// closing; nothing was done (HTTP 503).
	CategoryUnavailable = "unavailable"
)

// CLIError is a failure reported as one JSON object on stderr:
// {"error": true, "code": …, "category": …, "message": …}.
type CLIError struct {
	Code     string
	Category string
	Message  string
	// Exit is the process exit status; 0 means 1.
	Exit int
	// Silent marks a failure whose output was already printed (a run's
	// envelope): only the exit status is reported.
	Silent bool
	// Details, when set, is printed as the error's "details" (for example
	// the field errors of a rejected policy).
	Details any
}

// Error returns the structured error as JSON, so that surfaces which only
// carry an error's text (Wails rejects promises with it) still deliver the
// code and details.
func (e *CLIError) Error() string {
	b, _ := json.Marshal(struct {
		Error    bool   `json:"error"`
		Code     string `json:"code"`
		Category string `json:"category"`
		Message  string `json:"message"`
		Details  any    `json:"details,omitempty"`
	}{true, e.Code, e.Category, e.Message, e.Details})
	return string(b)
}

func errorf(code, category, format string, args ...any) *CLIError {
	return &CLIError{Code: code, Category: category, Message: fmt.Sprintf(format, args...)}
}

func usageError(format string, args ...any) *CLIError {
	e := errorf("usage", CategoryUsage, format, args...)
	e.Exit = 2
	return e
}

// writeError prints err as the structured JSON error and returns the exit
// status to use.
func writeError(w io.Writer, err error) int {
	var ce *CLIError
	if !errors.As(err, &ce) {
		ce = &CLIError{Code: "failed", Category: CategoryInternal, Message: err.Error()}
	}
	if ce.Silent {
		return ce.Exit
	}
	fmt.Fprintln(w, ce.Error())
	if ce.Exit != 0 {
		return ce.Exit
	}
	return 1
}
