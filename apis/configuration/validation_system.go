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

package configuration

import (
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// ValidateSystemCfg checks system-config: each strategy's fields, each node selector, and that no two node
// strategies select the same nodes.
func ValidateSystemCfg(path *field.Path, cfg *SystemCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	nodes := make([]nodeStrategy[slov1alpha1.SystemStrategy], len(cfg.NodeStrategies))
	for i, n := range cfg.NodeStrategies {
		nodes[i] = nodeStrategy[slov1alpha1.SystemStrategy]{profile: n.NodeCfgProfile, strategy: n.SystemStrategy}
	}
	return validateLayered(path, DefaultSystemStrategy(), cfg.ClusterStrategy, nodes, ValidateSystemStrategy, nil)
}

// ValidateSystemStrategy checks the fields of one system strategy.
func ValidateSystemStrategy(path *field.Path, s *slov1alpha1.SystemStrategy) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	errs = append(errs, validateMin(path.Child("minFreeKbytesFactor"), s.MinFreeKbytesFactor, 1)...)
	errs = append(errs, validateRange(path.Child("watermarkScaleFactor"), s.WatermarkScaleFactor, 1, 400)...)
	errs = append(errs, validateRange(path.Child("memcgReapBackGround"), s.MemcgReapBackGround, 0, 1)...)
	errs = append(errs, validateRange(path.Child("schedGroupIdentityEnabled"), s.SchedGroupIdentityEnabled, 0, 1)...)
	errs = append(errs, validateMin(path.Child("schedIdleSaverWmark"), s.SchedIdleSaverWmark, 0)...)
	errs = append(errs, validateRange(path.Child("pageCacheLimitEnabled"), s.PageCacheLimitEnabled, 0, 1)...)
	for _, name := range slices.Sorted(maps.Keys(s.SchedFeatures)) {
		if name == "" || strings.ContainsAny(name, " \t\n/") {
			errs = append(errs, field.Invalid(path.Child("schedFeatures").Key(name), name, "must be the name of a scheduler feature"))
		}
	}
	if s.TotalNetworkBandwidth.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("totalNetworkBandwidth"), s.TotalNetworkBandwidth.String(), "must not be negative"))
	}
	return errs
}
