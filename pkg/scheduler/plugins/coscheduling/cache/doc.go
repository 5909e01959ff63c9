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

// Package cache holds the state of gang scheduling: which gangs exist (from PodGroups or from the gang
// annotations of their pods), their members and what each member is doing (pending, waiting in Permit, bound),
// the gangs' schedule cycles, and the rules that move a gang from one state to the next. It makes no API
// calls and returns no scheduler statuses: the Coscheduling plugin reads the state it returns and decides.
//
// gang.go is one gang's state and the rules that move it (the state machine); cache.go is the index of gangs
// and their members that the informers feed; cycle.go holds the steps of a scheduling attempt (BeginCycle,
// Assume, Fail, Unreserve, Bind) that drive the state machine; spec.go reads a gang's spec from a PodGroup or
// from its pods' annotations; status.go computes a PodGroup's status.
package cache
