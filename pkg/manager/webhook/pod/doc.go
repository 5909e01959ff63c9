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

// Package pod holds koord-manager's admission handlers for pods.
//
// The mutating handler (MutatingPath) runs on CREATE only. It applies the ClusterColocationProfiles that match a
// new pod, in ascending name order, then rewrites the cpu and memory of koord-batch and koord-mid pods into the
// batch and mid extended resources, and finally rebuilds the node.koordinator.sh/extended-resource-spec
// annotation from the pod's batch resources. Mutating a pod it already mutated changes nothing.
//
// The validating handler (ValidatingPath) runs on CREATE and UPDATE. It rejects Koordinator QoS classes and
// priority classes that cannot be combined, LSE and LSR pods without whole, fixed CPUs, batch and mid resources
// on pods of another class, malformed Koordinator annotations and changes to the QoS class and priority of an
// existing pod. On UPDATE a pod is rejected only for problems the update introduces (besides the immutable
// fields), so that pods admitted before a rule existed can still be updated and deleted.
//
// Pods in kube-system and koordinator-system are never touched: the webhook configurations exclude these
// namespaces, and both handlers skip them too.
package pod
