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

// Package framework runs koord-descheduler's profiles on the upstream descheduler's plugin contracts
// (sigs.k8s.io/descheduler/pkg/framework/types): each round, every profile's Deschedule plugins and then its
// Balance plugins look at the ready nodes the configuration selects, and hand the pods they pick to the
// profile's Evictor, which the profile's Filter plugins and its one Evict plugin (MigrationController) make up.
package framework

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	koordinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions"
)

// Handle is what Koord's plugins get besides the upstream descheduler's Handle: Koord's informers, an event
// recorder and the clock. Plugins type-assert the upstream Handle they are given to it.
type Handle interface {
	frameworktypes.Handle
	// KoordSharedInformerFactory gives informers of Koord's kinds (NodeMetric, Reservation, ...). The runner
	// starts it and waits for the informers plugins asked for before the first round.
	KoordSharedInformerFactory() koordinformers.SharedInformerFactory
	// EventRecorder records Events on the objects plugins decide about.
	EventRecorder() events.EventRecorder
	// Clock tells the time.
	Clock() clock.PassiveClock
}

// PluginFactory builds a plugin from its decoded, defaulted arguments; the upstream descheduler's
// pluginregistry.PluginBuilder.
type PluginFactory = func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error)
