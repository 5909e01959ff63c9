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
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// nodeStrategy is a node strategy of one of the {clusterStrategy, nodeStrategies} keys.
// +kubebuilder:object:generate=false
type nodeStrategy[T any] struct {
	profile  NodeCfgProfile
	strategy *T
}

// validateLayered validates a {clusterStrategy, nodeStrategies} key. fields checks a strategy's own fields and
// runs on each strategy as written; relations checks rules across fields and runs on each strategy as it applies
// (defaults ← cluster ← node). A node strategy is not blamed for a relation error the cluster strategy has too.
func validateLayered[T any, PT deepCopier[T]](path *field.Path, defaults, cluster PT, nodes []nodeStrategy[T],
	fields, relations func(*field.Path, PT) field.ErrorList) field.ErrorList {
	clusterPath := path.Child("clusterStrategy")
	errs := fields(clusterPath, cluster)
	clusterMerged := Merge(defaults, cluster)
	var clusterRelations field.ErrorList
	if relations != nil {
		clusterRelations = relations(clusterPath, clusterMerged)
		errs = append(errs, clusterRelations...)
	}
	clusterKeys := make(map[string]bool, len(clusterRelations))
	for _, e := range clusterRelations {
		clusterKeys[relationKey(clusterPath, e)] = true
	}
	nodesPath := path.Child("nodeStrategies")
	profiles := make([]NodeCfgProfile, len(nodes))
	for i, n := range nodes {
		p := nodesPath.Index(i)
		errs = append(errs, fields(p, n.strategy)...)
		if relations != nil && n.strategy != nil {
			for _, e := range relations(p, Merge(clusterMerged, n.strategy)) {
				if !clusterKeys[relationKey(p, e)] {
					errs = append(errs, e)
				}
			}
		}
		profiles[i] = n.profile
	}
	return append(errs, validateNodeProfiles(nodesPath, profiles)...)
}

// relationKey identifies a relation error by its field relative to root, its type, value and detail, so that the
// same error found under another root compares equal.
func relationKey(root *field.Path, e *field.Error) string {
	return fmt.Sprintf("%s|%s|%v|%s", strings.TrimPrefix(e.Field, root.String()), e.Type, e.BadValue, e.Detail)
}

// validateNodeProfiles checks that every node strategy selects nodes with a valid, non-empty selector and that no
// two strategies select the same nodes. Since the first matching strategy wins, an overlap would silently shadow
// the later strategy on some nodes; Koordinator's ConfigMap webhook rejects it, and so does Koord, in the webhook
// and when loading.
//
// Overlap is found as Koordinator finds it, on "virtual nodes": for each selector, the label sets it requires
// (its matchLabels, each combination of its In values, and for Exists any value the other selectors use for the
// key). Two strategies overlap when a virtual node of one is selected by the other. Selectors on different label
// keys, such as pool=a and gpu=true, are not reported: whether a real node carries both is not known here.
func validateNodeProfiles(path *field.Path, profiles []NodeCfgProfile) field.ErrorList {
	var errs field.ErrorList
	valid := make([]bool, len(profiles))
	for i, p := range profiles {
		sel := path.Index(i).Child("nodeSelector")
		if p.NodeSelector == nil || (len(p.NodeSelector.MatchLabels) == 0 && len(p.NodeSelector.MatchExpressions) == 0) {
			errs = append(errs, field.Required(sel, "a node strategy must select nodes by matchLabels or matchExpressions"))
			continue
		}
		selErrs := metav1validation.ValidateLabelSelector(p.NodeSelector, metav1validation.LabelSelectorValidationOptions{}, sel)
		errs = append(errs, selErrs...)
		valid[i] = len(selErrs) == 0
	}
	return append(errs, validateNoOverlap(path, profiles, valid)...)
}

func validateNoOverlap(path *field.Path, profiles []NodeCfgProfile, valid []bool) field.ErrorList {
	candidates := candidateValues(profiles, valid)
	virtual := make([][]map[string]string, len(profiles))
	for i, p := range profiles {
		if valid[i] {
			virtual[i] = virtualNodes(p.NodeSelector, candidates)
		}
	}
	var errs field.ErrorList
	for j := range profiles {
		if !valid[j] {
			continue
		}
		for i := range j {
			if !valid[i] {
				continue
			}
			example, ok := overlap(virtual[i], profiles[j].NodeSelector)
			if !ok {
				example, ok = overlap(virtual[j], profiles[i].NodeSelector)
			}
			if ok {
				errs = append(errs, field.Forbidden(path.Index(j).Child("nodeSelector"), fmt.Sprintf(
					"node strategy %s overlaps node strategy %s: both select a node labelled %q; the first match would win, so node strategies must not overlap",
					profileName(path, j, profiles[j]), profileName(path, i, profiles[i]), example)))
			}
		}
	}
	return errs
}

// profileName names a node strategy in messages: its name and index, or its index.
func profileName(path *field.Path, i int, p NodeCfgProfile) string {
	if p.Name == "" {
		return path.Index(i).String()
	}
	return fmt.Sprintf("%q (%s)", p.Name, path.Index(i))
}

// overlap returns the first of nodes that sel selects, formatted as a label list.
func overlap(nodes []map[string]string, sel *metav1.LabelSelector) (string, bool) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "", false
	}
	for _, n := range nodes {
		if s.Matches(labels.Set(n)) {
			return labels.Set(n).String(), true
		}
	}
	return "", false
}

// existsPlaceholder is the label value a virtual node gets for an Exists requirement when no selector names a
// value for the key.
const existsPlaceholder = "koord-any-value"

// candidateValues collects, per label key, the values the valid selectors name, for Exists requirements.
func candidateValues(profiles []NodeCfgProfile, valid []bool) map[string][]string {
	out := map[string][]string{}
	add := func(k, v string) {
		if !slices.Contains(out[k], v) {
			out[k] = append(out[k], v)
		}
	}
	for i, p := range profiles {
		if !valid[i] {
			continue
		}
		for k, v := range p.NodeSelector.MatchLabels {
			add(k, v)
		}
		for _, r := range p.NodeSelector.MatchExpressions {
			for _, v := range r.Values {
				add(r.Key, v)
			}
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// virtualNodes returns up to maxVirtualNodes label sets that sel selects, built from the labels it requires.
func virtualNodes(sel *metav1.LabelSelector, candidates map[string][]string) []map[string]string {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil
	}
	type choice struct {
		key    string
		values []string
	}
	var choices []choice
	for _, r := range sel.MatchExpressions {
		if _, fixed := sel.MatchLabels[r.Key]; fixed {
			continue
		}
		switch r.Operator {
		case metav1.LabelSelectorOpIn:
			choices = append(choices, choice{r.Key, r.Values})
		case metav1.LabelSelectorOpExists:
			choices = append(choices, choice{r.Key, append(slices.Clone(candidates[r.Key]), existsPlaceholder)})
		}
	}
	nodes := []map[string]string{{}}
	for k, v := range sel.MatchLabels {
		nodes[0][k] = v
	}
	for _, c := range choices {
		var next []map[string]string
		for _, n := range nodes {
			if _, set := n[c.key]; set {
				next = append(next, n)
				continue
			}
			for _, v := range c.values {
				if len(next) == maxVirtualNodes {
					break
				}
				m := make(map[string]string, len(n)+1)
				for k, v := range n {
					m[k] = v
				}
				m[c.key] = v
				next = append(next, m)
			}
		}
		nodes = next
	}
	return slices.DeleteFunc(nodes, func(n map[string]string) bool { return !s.Matches(labels.Set(n)) })
}
