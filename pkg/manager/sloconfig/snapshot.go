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

// Package sloconfig keeps the SLO configuration koord-manager works from: the last good version of the
// slo-controller-config ConfigMap, parsed and validated.
//
// A Snapshot is one parsed version. The Store holds the snapshot in force and tells subscribers when it changes;
// the loader (SetupLoader) watches the ConfigMap and installs each version that parses and validates. A version
// that does not is never applied: the previous snapshot stays in force, and the problem is reported as a Warning
// Event on the ConfigMap, an error log line and the metrics koord_manager_slo_config_valid and
// koord_manager_slo_config_rejected_total. The ConfigMap webhook (pkg/manager/webhook/configmap) rejects such a
// version up front with the same message when it is installed.
//
// Fields Koord does not know are the exception: the webhook refuses them (a typo is caught when it is written),
// but a version that holds them and gets in anyway (written while the webhook was away, or by a Koordinator
// install before the switch) is applied without them, with a Warning Event UnknownSLOConfigFields naming them.
// Koordinator ignores unknown fields; refusing the whole version would leave a switching cluster on the defaults.
//
// A deleted or missing ConfigMap means the defaults, as in Koordinator.
package sloconfig

import (
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/configuration"
)

// Snapshot is one parsed and validated version of the ConfigMap. It is immutable once created: readers share it
// and must not modify it (the rendering functions of apis/configuration copy what they return).
type Snapshot struct {
	// ResourceVersion is the resourceVersion of the ConfigMap version parsed; empty for the defaults.
	ResourceVersion string
	// SLOCfg holds the keys; a key that is not set is nil and means its defaults.
	configuration.SLOCfg
}

// DefaultSnapshot returns the snapshot of a missing ConfigMap: no key set, so every strategy is the default.
func DefaultSnapshot() *Snapshot {
	return &Snapshot{}
}

// Parse parses and validates every key of cm, strictly: a field Koord does not know is an error. A missing or
// blank key means its defaults; keys Koord does not read (cpu-normalization-config, ...) are ignored. The error
// lists every problem, one per line, each naming the key and the field, e.g.
//
//	colocation-config: unknown field "cpuReclaimThresholdPrecent"
//	resource-threshold-config.clusterStrategy.memoryEvictLowerPercent: Invalid value: 75: must be less than memoryEvictThresholdPercent (70)
//
// A nil cm gives the DefaultSnapshot. The ConfigMap webhook uses it, so that a typo is refused when it is written.
func Parse(cm *corev1.ConfigMap) (*Snapshot, error) {
	snap, unknown, err := ParseTolerant(cm)
	if err != nil {
		return nil, err
	}
	if unknown != nil {
		return nil, unknown
	}
	return snap, nil
}

// ParseTolerant parses and validates every key of cm as Parse does, except that fields Koord does not know do
// not make the version invalid: the snapshot is built from the fields it knows and validated, and the unknown
// fields are returned in unknown (one line each, naming the key and the field). A ConfigMap written for
// Koordinator may hold fields of features or versions Koord lacks; refusing the whole version for them would leave
// a switching cluster on the defaults. err holds every other problem (syntax, types, duplicates, validation), and
// the unknown fields with them. The loader uses it.
func ParseTolerant(cm *corev1.ConfigMap) (snap *Snapshot, unknown, err error) {
	if cm == nil {
		return DefaultSnapshot(), nil, nil
	}
	snap = &Snapshot{ResourceVersion: cm.ResourceVersion}
	var errs, unknowns []error
	parse := func(key string, decode func(string) error) {
		data, ok := cm.Data[key]
		if !ok || strings.TrimSpace(data) == "" {
			return
		}
		switch err := decode(data); {
		case err == nil:
		case configuration.IsOnlyUnknownFields(err):
			unknowns = append(unknowns, err)
		default:
			errs = append(errs, err)
		}
	}
	parse(configuration.ColocationConfigKey, func(s string) (err error) {
		snap.Colocation, err = configuration.ParseColocationCfg(s)
		return err
	})
	parse(configuration.ResourceThresholdConfigKey, func(s string) (err error) {
		snap.ResourceThreshold, err = configuration.ParseResourceThresholdCfg(s)
		return err
	})
	parse(configuration.ResourceQOSConfigKey, func(s string) (err error) {
		snap.ResourceQOS, err = configuration.ParseResourceQOSCfg(s)
		return err
	})
	parse(configuration.CPUBurstConfigKey, func(s string) (err error) {
		snap.CPUBurst, err = configuration.ParseCPUBurstCfg(s)
		return err
	})
	parse(configuration.SystemConfigKey, func(s string) (err error) {
		snap.System, err = configuration.ParseSystemCfg(s)
		return err
	})
	parse(configuration.HostApplicationConfigKey, func(s string) (err error) {
		snap.HostApplication, err = configuration.ParseHostApplicationCfg(s)
		return err
	})
	for _, e := range configuration.ValidateSLOCfg((*field.Path)(nil), &snap.SLOCfg) {
		errs = append(errs, e)
	}
	unknown = errors.Join(unknowns...)
	if len(errs) > 0 {
		return nil, nil, errors.Join(append(unknowns, errs...)...)
	}
	return snap, unknown, nil
}
