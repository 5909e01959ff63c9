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

// Package reliability injects faults into a local cluster (pkg/koordctl/cluster) while a workload churns, and
// checks after each that the invariants of pkg/koordctl/check held throughout and that the system recovered,
// measuring how long it took. TestFaults runs the short list in `make test`; `make reliability` runs it with
// -long, which adds the faults that take minutes. The report is a table printed in the test log and written to
// $KOORD_RELIABILITY_REPORT when set.
package reliability
