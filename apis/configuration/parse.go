/*
Copyright 2026 The Koord Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package configuration

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"

	kjson "sigs.k8s.io/json"
)

// The parsers below decode the JSON value of one ConfigMap key. They only decode; the Validate functions check
// the values.
//
// Decoding is strict, unlike Koordinator's: an unknown or duplicated field is an error. A misspelt field such as
// "cpuReclaimThresholdPrecent" would otherwise be dropped without a word and its default would silently stay in
// force, which is what users of the ConfigMap complain about most. Field names still match case-insensitively, as
// in Koordinator, whose own documentation writes "CPUEvictTimeWindowSeconds". The error names the key and the
// JSON path of the field, e.g.
//
//	colocation-config: unknown field "nodeConfigs[0].cpuReclaimThresholdPrecent"
//
// The JSON literal null decodes to an empty configuration, as it does in Koordinator.

// ParseError reports a ConfigMap key whose value is not valid JSON or does not fit the key's schema.
// +kubebuilder:object:generate=false
type ParseError struct {
	// Key is the ConfigMap key, e.g. colocation-config.
	Key string
	// Err is the underlying problem; several strict-decoding problems are joined.
	Err error
}

// Error names the key, then the problem; when there are several problems, one per line, each naming the key.
func (e *ParseError) Error() string {
	var errs []error
	if j, ok := e.Err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{e.Err}
	}
	lines := make([]string, len(errs))
	for i, err := range errs {
		lines[i] = fmt.Sprintf("%s: %v", e.Key, err)
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the underlying problem.
func (e *ParseError) Unwrap() error {
	return e.Err
}

// UnknownFieldsError reports the fields of a key's value that match no field of its schema: a typo, or a field
// of a Koordinator version or feature Koord does not know. Everything else in the value decoded.
// +kubebuilder:object:generate=false
type UnknownFieldsError struct {
	// Errs name one unknown field each, by its JSON path.
	Errs []error
}

// Error lists the unknown fields, one per line.
func (e *UnknownFieldsError) Error() string { return errors.Join(e.Errs...).Error() }

// Unwrap returns one error per unknown field.
func (e *UnknownFieldsError) Unwrap() []error { return e.Errs }

// parseStrict decodes the value of the ConfigMap key into a new T, rejecting unknown and duplicate fields. When
// the only problem is unknown fields, it returns the value decoded without them too, with a *ParseError that
// wraps an *UnknownFieldsError, so that a caller may choose to apply the fields it knows (see
// IsOnlyUnknownFields); a caller that stops at the error is strict.
func parseStrict[T any](key, data string) (*T, error) {
	out, unknown, err := decodeStrict[T](data)
	if err != nil {
		return nil, &ParseError{Key: key, Err: err}
	}
	if len(unknown) > 0 {
		return out, &ParseError{Key: key, Err: &UnknownFieldsError{Errs: unknown}}
	}
	return out, nil
}

// IsOnlyUnknownFields reports whether err, from a Parse function, says only that the value has fields its schema
// does not know; the value was decoded without them.
func IsOnlyUnknownFields(err error) bool {
	var pe *ParseError
	if !errors.As(err, &pe) {
		return false
	}
	var unknown *UnknownFieldsError
	return errors.As(pe.Err, &unknown)
}

// decodeStrict decodes data into a new T. Syntax errors, duplicate fields and values of the wrong type are err;
// fields the schema does not know are returned in unknown, with the value decoded without them. Field names
// match case-insensitively, as in Koordinator. Errors name the JSON path of the field, or the line and column of
// a syntax error.
func decodeStrict[T any](data string) (out *T, unknown []error, err error) {
	// First pass, on the text as written: syntax errors (with their position), duplicate fields and type errors.
	strictErrs, err := kjson.UnmarshalStrict([]byte(data), new(T), kjson.DisallowDuplicateFields)
	if err != nil {
		return nil, nil, describeDecodeError(data, err)
	}
	if len(strictErrs) > 0 {
		return nil, nil, errors.Join(strictErrs...)
	}
	// Second pass, with the field names spelt as the schema spells them: unknown fields, named by their path.
	canonical, err := canonicalJSON(data, reflect.TypeFor[T]())
	if err != nil {
		return nil, nil, describeDecodeError(data, err)
	}
	out = new(T)
	unknown, err = kjson.UnmarshalStrict(canonical, out, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, nil, describeDecodeError(string(canonical), err)
	}
	return out, unknown, nil
}

// canonicalJSON re-encodes data with each object key that names a field of t only up to case ("Enable" for
// "enable") replaced by the field's JSON name. Koordinator decodes the ConfigMap with encoding/json, which matches
// field names case-insensitively, and its documentation has such keys (e.g. "CPUEvictTimeWindowSeconds"), so
// Koord accepts them too; a key that matches no field in any case stays as it is and is reported as unknown.
func canonicalJSON(data string, t reflect.Type) ([]byte, error) {
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber() // keep numbers as written: int64 values beyond 2^53 must not round
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(canonicalKeys(v, t))
}

var jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// canonicalKeys rewrites the keys of the decoded JSON value v that is decoded into type t (see canonicalJSON).
// Values of types that decode themselves (Quantity, Duration, IntOrString, ExtensionsMap) are left alone.
func canonicalKeys(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshalerType) {
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return v
		}
		fields := jsonFields(t)
		out := make(map[string]any, len(obj))
		// Sorted, so that of two case variants of one name the same one is always kept and the other reported.
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			name := k
			if _, exact := fields[k]; !exact {
				for f := range fields {
					_, written := obj[f]
					_, renamed := out[f]
					if !written && !renamed && strings.EqualFold(f, k) {
						name = f
						break
					}
				}
			}
			val := obj[k]
			if ft, ok := fields[name]; ok {
				val = canonicalKeys(val, ft)
			}
			out[name] = val
		}
		return out
	case reflect.Slice, reflect.Array:
		list, ok := v.([]any)
		if !ok {
			return v
		}
		for i := range list {
			list[i] = canonicalKeys(list[i], t.Elem())
		}
		return list
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for k := range obj {
			obj[k] = canonicalKeys(obj[k], t.Elem())
		}
		return obj
	}
	return v
}

// jsonFields returns the JSON names of the fields of struct type t, with the fields of inline (embedded, untagged)
// structs promoted, as encoding/json sees them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var inline []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				inline = append(inline, ft)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	for _, it := range inline {
		for name, ft := range jsonFields(it) {
			if _, shadowed := out[name]; !shadowed {
				out[name] = ft
			}
		}
	}
	return out
}

// typeErrorPattern matches the decoder's type error, which names the field by its Go struct path;
// valueErrorPattern matches its type error for the whole value.
var (
	typeErrorPattern  = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field ([\w.]+) of type (\S+)$`)
	valueErrorPattern = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go value of type (?:\S+\.)?(\S+)$`)
)

// describeDecodeError rewrites a decoding error for a person editing the ConfigMap: a syntax error gets its line
// and column, and a type error names the JSON path of the field rather than Go type names.
func describeDecodeError(data string, err error) error {
	if ok, offset := kjson.SyntaxErrorOffset(err); ok {
		line, col := lineColumn(data, offset)
		return fmt.Errorf("line %d, column %d: %w", line, col, err)
	}
	if m := valueErrorPattern.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("cannot decode %s as %s", m[1], m[2])
	}
	m := typeErrorPattern.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	// The Go path starts with the type name and includes the names of embedded structs (ColocationStrategy,
	// CPUQOS, ...), which are inline in JSON; JSON field names start in lower case.
	parts := strings.Split(m[2], ".")[1:]
	parts = slices.DeleteFunc(parts, func(p string) bool { return p == "" || unicode.IsUpper(rune(p[0])) })
	return fmt.Errorf("field %q: cannot decode %s as %s", strings.Join(parts, "."), m[1], m[3])
}

// lineColumn returns the 1-based line and column of the byte a syntax error reports: the decoder's offset counts
// the bytes read, including the offending one.
func lineColumn(data string, offset int64) (line, col int) {
	pos := int(min(max(offset-1, 0), int64(len(data))))
	before := data[:pos]
	line = strings.Count(before, "\n") + 1
	col = pos - strings.LastIndex(before, "\n")
	return line, col
}

// ParseColocationCfg decodes the value of colocation-config.
func ParseColocationCfg(data string) (*ColocationCfg, error) {
	return parseStrict[ColocationCfg](ColocationConfigKey, data)
}

// ParseResourceThresholdCfg decodes the value of resource-threshold-config.
func ParseResourceThresholdCfg(data string) (*ResourceThresholdCfg, error) {
	return parseStrict[ResourceThresholdCfg](ResourceThresholdConfigKey, data)
}

// ParseResourceQOSCfg decodes the value of resource-qos-config.
func ParseResourceQOSCfg(data string) (*ResourceQOSCfg, error) {
	return parseStrict[ResourceQOSCfg](ResourceQOSConfigKey, data)
}

// ParseCPUBurstCfg decodes the value of cpu-burst-config.
func ParseCPUBurstCfg(data string) (*CPUBurstCfg, error) {
	return parseStrict[CPUBurstCfg](CPUBurstConfigKey, data)
}

// ParseSystemCfg decodes the value of system-config.
func ParseSystemCfg(data string) (*SystemCfg, error) {
	return parseStrict[SystemCfg](SystemConfigKey, data)
}

// ParseHostApplicationCfg decodes the value of host-application-config.
func ParseHostApplicationCfg(data string) (*HostApplicationCfg, error) {
	return parseStrict[HostApplicationCfg](HostApplicationConfigKey, data)
}
