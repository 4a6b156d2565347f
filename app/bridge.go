package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
)

// bridge exposes a facade's exported methods by name. Each method must
// take one argument (a struct decoded from JSON) and return a value and an
// error; the same reflection that serves the browser decides the method
// set, and Wails binds the same exported methods, so the two surfaces list
// exactly the same API.
type bridge struct {
	target  reflect.Value
	methods map[string]reflect.Method
}

var errorType = reflect.TypeOf((*error)(nil)).Elem()

func newBridge(target any) (*bridge, error) {
	v := reflect.ValueOf(target)
	b := &bridge{target: v, methods: map[string]reflect.Method{}}
	t := v.Type()
	for i := 0; i < t.NumMethod(); i++ {
		m := t.Method(i)
		mt := m.Type
		if mt.NumIn() != 2 || mt.NumOut() != 2 || mt.Out(1) != errorType || mt.In(1).Kind() != reflect.Struct {
			return nil, fmt.Errorf("bridge: method %s must be func(Args struct) (Result, error)", m.Name)
		}
		b.methods[m.Name] = m
	}
	return b, nil
}

// names lists the methods in alphabetical order.
func (b *bridge) names() []string {
	out := make([]string, 0, len(b.methods))
	for n := range b.methods {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// call decodes body into the method's argument (unknown fields are an
// error), invokes it and returns its result.
func (b *bridge) call(name string, body []byte) (any, error) {
	m, ok := b.methods[name]
	if !ok {
		return nil, &CLIError{Code: "unknown_method", Category: CategoryNotFound, Message: fmt.Sprintf("no API method %q", name), Exit: 404}
	}
	arg := reflect.New(m.Type.In(1))
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(arg.Interface()); err != nil {
			return nil, &CLIError{Code: "invalid_arguments", Category: CategoryInvalid, Message: fmt.Sprintf("%s: %v", name, err)}
		}
	}
	out := m.Func.Call([]reflect.Value{b.target, arg.Elem()})
	if err, _ := out[1].Interface().(error); err != nil {
		return nil, err
	}
	return out[0].Interface(), nil
}
