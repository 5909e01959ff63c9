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

package v1

import (
	"k8s.io/apimachinery/pkg/runtime"
	schedconfigv1 "k8s.io/kube-scheduler/config/v1"
)

// SchemeGroupVersion is kube-scheduler's configuration group at version v1.
var SchemeGroupVersion = schedconfigv1.SchemeGroupVersion

var (
	// localSchemeBuilder is kube-scheduler's own builder of v1: kube-scheduler defaults and converts plugin
	// arguments with a scheme built from it, so Koord's types, defaults and conversions must be in it.
	localSchemeBuilder = &schedconfigv1.SchemeBuilder
	// AddToScheme adds kube-scheduler's configuration group at v1, Koord's types included, to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	// The generated functions register themselves in zz_generated.*.go; only hand-written ones are listed
	// here, so the package compiles before generation.
	localSchemeBuilder.Register(addKnownTypes, RegisterDefaults)
}

// addKnownTypes registers the v1 argument types of Koord's plugins.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&LoadAwareSchedulingArgs{},
		&ElasticQuotaArgs{},
		&CoschedulingArgs{},
		&ReservationArgs{},
		&SchedulingHintArgs{},
		&NodeNUMAResourceArgs{},
		&DeviceShareArgs{},
	)
	return nil
}
