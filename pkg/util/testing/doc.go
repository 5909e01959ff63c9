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

// Package testing holds fluent builders of the objects Koord's tests make again and again (pods, nodes,
// NodeMetrics, resource lists), after kueue's pkg/util/testing: MakePod("p").Req(Resources("cpu", "1")).Obj().
// Import it as utiltesting. It is for tests only; nothing outside _test files imports it.
package testing
