package fleet

// Results recorded whole in a job's output: encoding/gob, which carries
// what JSON cannot (the floats NaN and ±Inf, fields a report reads but
// JSON output leaves out, such as an experiment's table).

import (
	"bytes"
	"encoding/gob"
	"reflect"
)

// textError is an error as its message: the form in which the warnings
// of a result (stats' []error) travel, whatever their own type.
type textError struct{ Msg string }

func (e textError) Error() string { return e.Msg }

func init() { gob.Register(textError{}) }

// encodeGob encodes v, a pointer, after turning every error it holds into
// a textError with its message.
func encodeGob(v any) ([]byte, error) {
	plainErrors(reflect.ValueOf(v), map[uintptr]bool{})
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decodeGob decodes what encodeGob encoded into v, a pointer.
func decodeGob(data []byte, v any) error { return gob.NewDecoder(bytes.NewReader(data)).Decode(v) }

var errorType = reflect.TypeFor[error]()

// plainErrors replaces the errors reachable from v through exported
// fields, slices and pointers by their textError.
func plainErrors(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		plainErrors(v.Elem(), seen)
	case reflect.Interface:
		if v.IsNil() || v.Type() != errorType || !v.CanSet() {
			return
		}
		if _, ok := v.Interface().(textError); !ok {
			v.Set(reflect.ValueOf(textError{v.Interface().(error).Error()}))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				plainErrors(v.Field(i), seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			plainErrors(v.Index(i), seen)
		}
	}
}
