package app

import (
	"bytes"
	"errors"
	"testing"
)

// writeError prints one line of the same JSON Error returns (what the
// desktop's promise rejections carry), with details only when there are
// some, and exits with the error's status; a plain error becomes
// failed/internal.
func TestWriteErrorPrintsTheStructuredError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
		exit int
	}{
		{&CLIError{Code: "input_too_large", Category: CategoryInvalid, Message: "a \"b\"", Details: map[string]int{"max": 3}, Exit: 1},
			`{"error":true,"code":"input_too_large","category":"invalid_input","message":"a \"b\"","details":{"max":3}}` + "\n", 1},
		{usageError("no %s", "flag"), `{"error":true,"code":"usage","category":"usage","message":"no flag"}` + "\n", 2},
		{errors.New("plain"), `{"error":true,"code":"failed","category":"internal","message":"plain"}` + "\n", 1},
	} {
		var b bytes.Buffer
		exit := writeError(&b, c.err)
		if b.String() != c.want || exit != c.exit {
			t.Errorf("writeError(%v) printed %q exit %d, want %q exit %d", c.err, b.String(), exit, c.want, c.exit)
		}
	}
}
