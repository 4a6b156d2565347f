package record

import (
	"reflect"
	"strings"
)

// Fields returns the JSON member names of v, one of this package's struct
// types (Record{}, Manifest{}, …), in declaration order: the members
// Verify requires of that part of a record. It returns nil for a value
// that is not a struct.
func Fields(v any) []string {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
