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

package validation

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/pkg/scheduler/apis/config"
)

// ValidateElasticQuotaArgs checks ElasticQuotaArgs after defaulting: a non-negative delayEvictTime, a positive
// revokePodInterval and quotaSnapshotUpdateInterval, valid resource names with non-negative quantities in the
// system and default quotas' max, a valid namespace name in quotaGroupNamespace, and no hook plugins (Koord
// has none; Koordinator's would be silently missing otherwise).
func ValidateElasticQuotaArgs(path *field.Path, args *config.ElasticQuotaArgs) field.ErrorList {
	var errs field.ErrorList
	if args.DelayEvictTime.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("delayEvictTime"), args.DelayEvictTime.Duration.String(), "must not be negative"))
	}
	if args.RevokePodInterval.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("revokePodInterval"), args.RevokePodInterval.Duration.String(), "must be greater than 0"))
	}
	if args.QuotaSnapshotUpdateInterval.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("quotaSnapshotUpdateInterval"), args.QuotaSnapshotUpdateInterval.Duration.String(), "must be greater than 0"))
	}
	errs = append(errs, validateResourceList(path.Child("defaultQuotaGroupMax"), args.DefaultQuotaGroupMax)...)
	errs = append(errs, validateResourceList(path.Child("systemQuotaGroupMax"), args.SystemQuotaGroupMax)...)
	if msgs := validation.IsDNS1123Label(args.QuotaGroupNamespace); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("quotaGroupNamespace"), args.QuotaGroupNamespace, "must be a namespace name: "+msgs[0]))
	}
	for i, h := range args.HookPlugins {
		errs = append(errs, field.Invalid(path.Child("hookPlugins").Index(i), h.Key, "quota hook plugins are not implemented by Koord; remove the entry"))
	}
	return errs
}

// validateResourceList checks that every key of l is a resource name and every quantity is not negative, in
// key order so that messages are stable.
func validateResourceList(path *field.Path, l corev1.ResourceList) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(l)) {
		p := path.Key(string(name))
		errs = append(errs, validateResourceName(p, name)...)
		if q := l[name]; q.Sign() < 0 {
			errs = append(errs, field.Invalid(p, q.String(), "must not be negative"))
		}
	}
	return errs
}
