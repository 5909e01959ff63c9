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

// Package statesinformer is what the node agent knows from the apiserver about its own node: the Node, the pods
// bound to it, and its NodeSLO and NodeMetric. It watches each with a field selector (metadata.name or
// spec.nodeName), so the agent never lists the cluster, and filters again in its event handlers so that a
// watch that ignores the selector (a fake clientset, a misbehaving proxy) cannot leak other nodes' objects in.
//
// When the apiserver goes away the informers keep their caches, so the agent keeps enforcing the last NodeSLO.
// The last NodeSLO (and Node) is also kept when the object is deleted, because enforcing a stale policy is safer
// than enforcing none; the deletion is logged. A deleted NodeMetric is forgotten, since the reporter must not
// write to an object koord-manager has removed.
//
// Objects returned by the getters are shared with the informer caches: callers must not modify them.
package statesinformer
