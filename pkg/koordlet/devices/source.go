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

package devices

import (
	"context"
	"errors"

	schedulingv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
)

// Found is what a Source found: devices, and labels of the Device object.
type Found struct {
	Devices []schedulingv1alpha1.DeviceInfo
	Labels  map[string]string
}

// Source finds devices of the node.
type Source interface {
	// Name names the source in logs.
	Name() string
	// Discover returns the devices now. ErrUnavailable means the source cannot work on this node (no
	// library, no sysfs class): it is logged once and reports nothing.
	Discover(ctx context.Context) (Found, error)
}

// ErrUnavailable is wrapped by sources that cannot work on this node.
var ErrUnavailable = errors.New("device source unavailable")
