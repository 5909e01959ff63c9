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

// Package examples embeds the example scenarios of `koordctl demo`, so that koordctl runs the shipped demo
// from its binary alone. The files stay the source of truth; README.md documents their format.
package examples

import "embed"

// DefaultScenario is the path, in FS, of the scenario `koordctl demo` runs by default.
const DefaultScenario = "demo/colocation-day.yaml"

// FS holds the scenarios under demo/, with their paths relative to this directory.
//
//go:embed demo/*.yaml
var FS embed.FS
