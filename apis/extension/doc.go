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

// Package extension is the typed form of the Koordinator label and annotation
// API: the keys Koordinator components and users put on Pods, Nodes and quota
// objects, and parsers and formatters for the values they carry.
//
// Getters that read an annotation follow one contract: a missing or empty
// annotation yields a nil (or zero) value and no error; a malformed or invalid
// value yields an [*AnnotationError] (or [*LabelError] for labels) that names
// the key and the problem. Setters validate before they write, produce the
// JSON Koordinator writes (empty fields omitted), and remove the annotation
// when given a nil value, so that a Get after a Set returns the value set.
package extension
