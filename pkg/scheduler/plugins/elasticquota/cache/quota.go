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

package cache

import (
	"fmt"

	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/pkg/util/quantity"
)

// Quota is the configuration of one quota, as its ElasticQuota object gives it.
type Quota struct {
	// Name and Namespace are the object's; quotas are known by name only.
	Name, Namespace string
	// Parent is the parent quota's name (label quota.scheduling.koordinator.sh/parent, else the root quota).
	Parent string
	// IsParent marks a quota that has children instead of pods.
	IsParent bool
	// AllowLentResource is false when the quota keeps its min even when it does not request it.
	AllowLentResource bool
	// Min, Max and Guaranteed are the quota's spec.min, spec.max and guaranteed annotation.
	Min, Max, Guaranteed quantity.Amounts
	// SharedWeight is the quota's weight in sharing spare resources: the shared-weight annotation, else Max.
	SharedWeight quantity.Amounts
	// Namespaces are the namespaces whose pods the quota takes (the namespaces annotation).
	Namespaces []string
	// TreeID is the quota tree the quota belongs to (label quota.scheduling.koordinator.sh/tree-id); "" is the
	// default tree. Trees count only with Options.MultiQuotaTree.
	TreeID string
	// TreeRoot marks the root quota of its tree (label quota.scheduling.koordinator.sh/is-root); TreeTotal is
	// then what the tree shares (annotation quota.scheduling.koordinator.sh/total-resource, nil when absent),
	// and IgnoreDefaultTree keeps it in the default tree's total too.
	TreeRoot          bool
	TreeTotal         quantity.Amounts
	IgnoreDefaultTree bool
}

// QuotaFromObject reads the quota configuration of eq. It fails, naming the annotation, when the
// shared-weight, guaranteed, namespaces or (on a tree's root) total-resource annotation does not parse, or a
// weight is negative.
func QuotaFromObject(eq *schedv1alpha1.ElasticQuota) (*Quota, error) {
	q := &Quota{
		Name:              eq.Name,
		Namespace:         eq.Namespace,
		Parent:            extension.GetParentQuotaName(eq),
		IsParent:          extension.IsParentQuota(eq),
		AllowLentResource: extension.IsAllowLentResource(eq),
		Min:               quantity.FromList(eq.Spec.Min),
		Max:               quantity.FromList(eq.Spec.Max),
	}
	weight, err := extension.GetSharedWeight(eq)
	if err != nil {
		return nil, fmt.Errorf("quota %q: %w", eq.Name, err)
	}
	if weight == nil {
		q.SharedWeight = q.Max.Clone()
	} else {
		q.SharedWeight = quantity.FromList(weight)
		for _, name := range q.SharedWeight.Names() {
			if q.SharedWeight[name] < 0 {
				return nil, fmt.Errorf("quota %q: annotation %q: %s weight %s is negative", eq.Name, extension.AnnotationSharedWeight, name, quantity.Format(name, q.SharedWeight[name]))
			}
		}
	}
	guaranteed, err := extension.GetGuaranteed(eq)
	if err != nil {
		return nil, fmt.Errorf("quota %q: %w", eq.Name, err)
	}
	q.Guaranteed = quantity.FromList(guaranteed)
	q.TreeID = extension.GetQuotaTreeID(eq)
	q.TreeRoot = extension.IsTreeRootQuota(eq)
	q.IgnoreDefaultTree = eq.Labels[extension.LabelQuotaIgnoreDefaultTree] == "true"
	if q.TreeRoot {
		total, err := extension.GetTotalResource(eq)
		if err != nil {
			return nil, fmt.Errorf("quota %q: %w", eq.Name, err)
		}
		if total != nil {
			q.TreeTotal = quantity.FromList(total)
		}
	}
	if q.Namespaces, err = extension.GetAnnotationQuotaNamespaces(eq); err != nil {
		return nil, fmt.Errorf("quota %q: %w", eq.Name, err)
	}
	return q, nil
}
