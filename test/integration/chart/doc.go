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

// Package chart tests the Helm chart charts/koord against a real apiserver: helm lint and the values schema,
// the rendered manifests of several value sets (Koord's defaults, a values file written for Koordinator's
// chart, colocation on, monitors on) applied with strict server-side field validation, the components' command
// lines as their binaries parse them, and helm install, upgrade and uninstall.
package chart
