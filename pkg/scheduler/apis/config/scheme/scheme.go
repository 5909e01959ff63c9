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

// Package scheme registers the arguments of koord-scheduler's plugins in kube-scheduler's scheme, the one
// kube-scheduler decodes its --config file with. Importing it is enough; the plugin packages import it, so any
// binary that registers a Koord plugin can also read that plugin's arguments.
package scheme

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kubeschedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	configv1 "github.com/koord-dev/koord/pkg/scheduler/apis/config/v1"
)

// Scheme is kube-scheduler's scheme, the one its configuration is decoded with.
var Scheme = kubeschedulerscheme.Scheme

// kube-scheduler builds its scheme from the scheme builders of its packages in their init functions, which
// run before the init functions of Koord's packages that add to those builders. This adds them again, now with
// Koord's types; adding what is already there changes nothing.
func init() {
	AddToScheme(Scheme)
}

// AddToScheme adds kube-scheduler's configuration group, internal and v1, with Koord's plugin arguments, to
// a scheme.
func AddToScheme(s *runtime.Scheme) {
	utilruntime.Must(config.AddToScheme(s))
	utilruntime.Must(configv1.AddToScheme(s))
}
