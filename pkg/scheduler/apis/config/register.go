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

package config

import (
	"k8s.io/apimachinery/pkg/runtime"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// SchemeGroupVersion is the internal version of kube-scheduler's configuration group.
var SchemeGroupVersion = schedconfig.SchemeGroupVersion

var (
	// localSchemeBuilder is kube-scheduler's own builder of the internal version: kube-scheduler converts
	// plugin arguments with a scheme built from it (GetPluginArgConversionScheme), so Koord's types must be in
	// it rather than in a builder of their own.
	localSchemeBuilder = &schedconfig.SchemeBuilder
	// AddToScheme adds the internal version of kube-scheduler's configuration group, Koord's types included,
	// to a scheme.
	AddToScheme = localSchemeBuilder.AddToScheme
)

func init() {
	localSchemeBuilder.Register(addKnownTypes)
}

// addKnownTypes registers the internal argument types of Koord's plugins.
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
