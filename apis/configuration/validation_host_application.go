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
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
)

// ValidateHostApplicationCfg checks host-application-config: each application, each node selector, and that no
// two node configurations select the same nodes.
func ValidateHostApplicationCfg(path *field.Path, cfg *HostApplicationCfg) field.ErrorList {
	if cfg == nil {
		return nil
	}
	errs := validateHostApplications(path.Child("applications"), cfg.Applications)
	profiles := make([]NodeCfgProfile, len(cfg.NodeConfigs))
	for i := range cfg.NodeConfigs {
		errs = append(errs, validateHostApplications(path.Child("nodeConfigs").Index(i).Child("applications"), cfg.NodeConfigs[i].Applications)...)
		profiles[i] = cfg.NodeConfigs[i].NodeCfgProfile
	}
	return append(errs, validateNodeProfiles(path.Child("nodeConfigs"), profiles)...)
}

// validateHostApplications checks a list of host applications: unique non-empty names (the node agent reports
// their usage by name) and known priority, QoS and cgroup base values.
func validateHostApplications(path *field.Path, apps []slov1alpha1.HostApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]int, len(apps))
	for i, app := range apps {
		p := path.Index(i)
		switch j, dup := seen[app.Name]; {
		case app.Name == "":
			errs = append(errs, field.Required(p.Child("name"), "the node agent reports host applications by name"))
		case dup:
			errs = append(errs, field.Invalid(p.Child("name"), app.Name, fmt.Sprintf("is also the name of %s", path.Index(j))))
		default:
			seen[app.Name] = i
		}
		errs = append(errs, validateEnum(p.Child("priority"), extension.PriorityClass(app.Priority), true,
			extension.PriorityProd, extension.PriorityMid, extension.PriorityBatch, extension.PriorityFree)...)
		errs = append(errs, validateEnum(p.Child("qos"), extension.QoSClass(app.QoS), true,
			extension.QoSLSE, extension.QoSLSR, extension.QoSLS, extension.QoSBE, extension.QoSSystem)...)
		if app.CgroupPath != nil {
			errs = append(errs, validateEnum(p.Child("cgroupPath", "base"), app.CgroupPath.Base, true,
				slov1alpha1.CgroupBaseTypeRoot, slov1alpha1.CgroupBaseTypeKubepods,
				slov1alpha1.CgroupBaseTypeKubeBurstable, slov1alpha1.CgroupBaseTypeKubeBesteffort)...)
		}
	}
	return errs
}
