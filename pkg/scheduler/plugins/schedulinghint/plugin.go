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

// Package schedulinghint is the SchedulingHint plugin: a pod's scheduling hint (the annotation
// internal.scheduling.koordinator.sh/scheduling-hint, as Koordinator's) restricts the nodes it may be placed on
// and, with the plugin at Score, prefers the nodes the hint names first. README.md has the details.
package schedulinghint

import (
	"context"

	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/koord-dev/koord/apis/extension"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
	"github.com/koord-dev/koord/pkg/scheduler/apis/config/validation"
	"github.com/koord-dev/koord/pkg/scheduler/plugins"
)

// Name is the plugin's name in kube-scheduler's configuration: Koordinator's.
const Name = "SchedulingHint"

// Plugin reads scheduling hints.
type Plugin struct {
	maxHintNodes int
}

// NewFactory returns the factory of the plugin, for app.WithPlugin(Name, NewFactory()).
func NewFactory() frameworkruntime.PluginFactory {
	return plugins.Factory(Name, validation.ValidateSchedulingHintArgs, func(_ context.Context, args *config.SchedulingHintArgs, _ fwk.Handle) (*Plugin, error) {
		return &Plugin{maxHintNodes: int(args.MaxHintNodes)}, nil
	})
}

// Name returns Name.
func (p *Plugin) Name() string { return Name }

// stateKey keys the pod's hint in the CycleState.
const stateKey fwk.StateKey = Name

// hintState is the pod's hint as the cycle reads it: the required nodes, and the preferred ones with their
// rank (0 first), at most maxHintNodes of them.
type hintState struct {
	required  sets.Set[string]
	preferred map[string]int
}

// Clone returns the state itself: it is never changed.
func (s *hintState) Clone() fwk.StateData { return s }

// stateOf parses the pod's hint; nil when it has none.
func (p *Plugin) stateOf(hint *extension.SchedulingHint) *hintState {
	if hint == nil || (len(hint.NodeNames) == 0 && len(hint.PreferredNodeNames) == 0) {
		return nil
	}
	s := &hintState{preferred: map[string]int{}}
	if len(hint.NodeNames) > 0 {
		s.required = sets.New(hint.NodeNames...)
	}
	for _, name := range hint.PreferredNodeNames {
		if len(s.preferred) == p.maxHintNodes {
			break
		}
		if _, dup := s.preferred[name]; !dup && (s.required == nil || s.required.Has(name)) {
			s.preferred[name] = len(s.preferred)
		}
	}
	return s
}
