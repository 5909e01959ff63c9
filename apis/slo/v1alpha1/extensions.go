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

package v1alpha1

import (
	"encoding/json"
	"fmt"
)

// ExtensionsMap holds free-form, third-party extension data keyed by extension name. It serializes as a plain
// JSON object whose fields the apiserver keeps as they are.
//
// The values must be JSON-compatible: what encoding/json produces when decoding into an interface{}
// (map[string]interface{}, []interface{}, string, float64, int64, bool, json.Number or nil). Other values are
// converted to that form when the map is deep-copied.
//
// +kubebuilder:object:generate=false
// +kubebuilder:validation:Type=object
// +kubebuilder:pruning:PreserveUnknownFields
type ExtensionsMap struct {
	// Object is the decoded extension data.
	Object map[string]interface{} `json:"-"`
}

// MarshalJSON encodes the extension data as a JSON object.
func (in ExtensionsMap) MarshalJSON() ([]byte, error) {
	if in.Object == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(in.Object)
}

// UnmarshalJSON decodes a JSON object into the extension data; JSON null leaves the map nil.
func (in *ExtensionsMap) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		in.Object = nil
		return nil
	}
	var obj map[string]interface{}
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("decoding extensions: %w", err)
	}
	in.Object = obj
	return nil
}

// DeepCopyInto copies the receiver into out. in must be non-nil.
func (in *ExtensionsMap) DeepCopyInto(out *ExtensionsMap) {
	if in.Object == nil {
		out.Object = nil
		return
	}
	out.Object = make(map[string]interface{}, len(in.Object))
	for k, v := range in.Object {
		out.Object[k] = deepCopyJSONValue(v)
	}
}

// DeepCopy returns a deep copy of the receiver, or nil if it is nil.
func (in *ExtensionsMap) DeepCopy() *ExtensionsMap {
	if in == nil {
		return nil
	}
	out := new(ExtensionsMap)
	in.DeepCopyInto(out)
	return out
}

// deepCopyJSONValue copies a JSON-compatible value. A value of any other type is converted by a JSON round trip,
// so the copy never aliases the original; if it cannot be encoded it is copied as nil.
func deepCopyJSONValue(v interface{}) interface{} {
	switch x := v.(type) {
	case nil, string, bool, float64, int64, json.Number:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case map[string]interface{}:
		out := make(map[string]interface{}, len(x))
		for k, e := range x {
			out[k] = deepCopyJSONValue(e)
		}
		return out
	case []interface{}:
		out := make([]interface{}, len(x))
		for i, e := range x {
			out[i] = deepCopyJSONValue(e)
		}
		return out
	default:
		data, err := json.Marshal(x)
		if err != nil {
			return nil
		}
		var out interface{}
		if err := json.Unmarshal(data, &out); err != nil {
			return nil
		}
		return out
	}
}
