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

package config

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Float64OrString is a number written as a JSON number or a string, as Koordinator's evictQPS ("10" or 10).
// +k8s:deepcopy-gen=true
type Float64OrString struct {
	// Value is the number.
	Value float64
	// Quoted tells whether it was written as a string.
	Quoted bool
}

// UnmarshalJSON reads a JSON number or a string holding one.
func (f *Float64OrString) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		f.Value, f.Quoted = v, true
		return nil
	}
	f.Quoted = false
	return json.Unmarshal(data, &f.Value)
}

// MarshalJSON writes the number the way it was read.
func (f Float64OrString) MarshalJSON() ([]byte, error) {
	s := strconv.FormatFloat(f.Value, 'g', -1, 64)
	if f.Quoted {
		return json.Marshal(s)
	}
	return []byte(s), nil
}

// String returns the number.
func (f *Float64OrString) String() string {
	if f == nil {
		return "<nil>"
	}
	return strconv.FormatFloat(f.Value, 'g', -1, 64)
}
