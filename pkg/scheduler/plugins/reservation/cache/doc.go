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

// Package cache holds the state of the Reservation plugin: the placed (Available) Reservations, with their
// owner entries parsed and their resources converted once per version, and the allocations of owner pods,
// assumed by Reserve or bound with the reservation-allocated annotation. A scheduling cycle reads an immutable
// Snapshot of it, rebuilt only after a change. The plugin decides which reservation a pod may use; this package
// remembers.
package cache
