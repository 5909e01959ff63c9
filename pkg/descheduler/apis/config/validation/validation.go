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

// Package validation checks koord-descheduler's configuration after defaults are filled in, and names every
// field that is wrong.
package validation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/koord-dev/koord/pkg/descheduler/apis/config"
)

// Plugins lists the plugins koord-descheduler runs per extension point.
var Plugins = map[string][]string{
	"deschedule": nil,
	"balance":    {config.LowNodeLoadName},
	"evict":      {config.MigrationControllerName},
	"filter":     {config.MigrationControllerName},
}

// ValidateDeschedulerConfiguration checks a defaulted configuration.
func ValidateDeschedulerConfiguration(c *config.DeschedulerConfiguration) error {
	var errs field.ErrorList
	if c.DeschedulingInterval.Duration < 0 {
		errs = append(errs, field.Invalid(field.NewPath("deschedulingInterval"), c.DeschedulingInterval.String(), "must not be negative"))
	}
	if c.NodeSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(c.NodeSelector, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeSelector"))...)
	}
	names := map[string]bool{}
	for i := range c.Profiles {
		p := &c.Profiles[i]
		path := field.NewPath("profiles").Index(i)
		if p.Name == "" {
			errs = append(errs, field.Required(path.Child("name"), "every profile needs a name when there are several"))
		} else if names[p.Name] {
			errs = append(errs, field.Duplicate(path.Child("name"), p.Name))
		}
		names[p.Name] = true
		errs = append(errs, validateProfile(path, p)...)
	}
	return errs.ToAggregate()
}

func validateProfile(path *field.Path, p *config.DeschedulerProfile) field.ErrorList {
	var errs field.ErrorList
	if p.NodeSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(p.NodeSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("nodeSelector"))...)
	}
	sets := map[string]config.PluginSet{"deschedule": p.Plugins.Deschedule, "balance": p.Plugins.Balance, "evict": p.Plugins.Evict, "filter": p.Plugins.Filter}
	for _, point := range []string{"deschedule", "balance", "evict", "filter"} {
		seen := map[string]bool{}
		for j, pl := range sets[point].Enabled {
			pp := path.Child("plugins", point, "enabled").Index(j).Child("name")
			switch {
			case seen[pl.Name]:
				errs = append(errs, field.Duplicate(pp, pl.Name))
			case !slices.Contains(Plugins[point], pl.Name):
				errs = append(errs, field.NotSupported(pp, pl.Name, Plugins[point]))
			}
			seen[pl.Name] = true
		}
	}
	if len(p.Plugins.Evict.Enabled) > 1 {
		errs = append(errs, field.TooMany(path.Child("plugins", "evict", "enabled"), len(p.Plugins.Evict.Enabled), 1))
	}
	seen := map[string]bool{}
	for j := range p.PluginConfig {
		pc := &p.PluginConfig[j]
		pp := path.Child("pluginConfig").Index(j)
		if seen[pc.Name] {
			errs = append(errs, field.Duplicate(pp.Child("name"), pc.Name))
		}
		seen[pc.Name] = true
		switch args := pc.Args.Object.(type) {
		case *config.LowNodeLoadArgs:
			errs = append(errs, ValidateLowNodeLoadArgs(pp.Child("args"), args)...)
		case *config.MigrationControllerArgs:
			errs = append(errs, ValidateMigrationControllerArgs(pp.Child("args"), args)...)
		}
	}
	return errs
}

// ValidateLowNodeLoadArgs checks defaulted LowNodeLoadArgs.
func ValidateLowNodeLoadArgs(path *field.Path, a *config.LowNodeLoadArgs) field.ErrorList {
	var errs field.ErrorList
	if a.NodeMetricExpirationSeconds != nil && *a.NodeMetricExpirationSeconds <= 0 {
		errs = append(errs, field.Invalid(path.Child("nodeMetricExpirationSeconds"), *a.NodeMetricExpirationSeconds, "must be greater than 0"))
	}
	if a.NumberOfNodes != nil && *a.NumberOfNodes < 0 {
		errs = append(errs, field.Invalid(path.Child("numberOfNodes"), *a.NumberOfNodes, "must not be negative"))
	}
	if a.DetectorCacheTimeout != nil && a.DetectorCacheTimeout.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("detectorCacheTimeout"), a.DetectorCacheTimeout.String(), "must be greater than 0"))
	}
	errs = append(errs, validateNamespaces(path.Child("evictableNamespaces"), a.EvictableNamespaces)...)
	if a.NodeSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(a.NodeSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("nodeSelector"))...)
	}
	for i, s := range a.PodSelectors {
		if s.Selector != nil {
			errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("podSelectors").Index(i).Child("selector"))...)
		}
	}
	errs = append(errs, validateWeights(path.Child("resourceWeights"), a.ResourceWeights)...)
	pools := map[string]bool{}
	for i := range a.NodePools {
		pool := &a.NodePools[i]
		pp := path.Child("nodePools").Index(i)
		if pool.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), "a node pool needs a name"))
		} else if pools[pool.Name] {
			errs = append(errs, field.Duplicate(pp.Child("name"), pool.Name))
		}
		pools[pool.Name] = true
		// The first pool holds the arguments' own fields: report them where the user wrote them.
		tp := pp
		if i == 0 && pool.Name == config.DefaultNodePoolName {
			tp = path
		}
		if pool.NodeSelector != nil && tp != path {
			errs = append(errs, metav1validation.ValidateLabelSelector(pool.NodeSelector, metav1validation.LabelSelectorValidationOptions{}, pp.Child("nodeSelector"))...)
		}
		errs = append(errs, validateThresholds(tp, "lowThresholds", "highThresholds", pool.LowThresholds, pool.HighThresholds, pool.UseDeviationThresholds)...)
		errs = append(errs, validateThresholds(tp, "prodLowThresholds", "prodHighThresholds", pool.ProdLowThresholds, pool.ProdHighThresholds, pool.UseDeviationThresholds)...)
		for r, ph := range pool.ProdHighThresholds {
			if h, ok := pool.HighThresholds[r]; ok && ph > h {
				errs = append(errs, field.Invalid(tp.Child("prodHighThresholds").Key(string(r)), float64(ph), fmt.Sprintf("must not be above highThresholds[%s] (%g)", r, float64(h))))
			}
		}
		if tp != path {
			errs = append(errs, validateWeights(pp.Child("resourceWeights"), pool.ResourceWeights)...)
		}
		if c := pool.AnomalyCondition; c != nil && c.Timeout != nil && c.Timeout.Duration <= 0 {
			errs = append(errs, field.Invalid(tp.Child("anomalyCondition", "timeout"), c.Timeout.String(), "must be greater than 0"))
		}
	}
	return errs
}

// validateThresholds checks that percentages are not negative, name resources, and that no low threshold
// is above its high threshold (unless they are deviations from the mean, where both widen a window).
func validateThresholds(path *field.Path, lowName, highName string, low, high config.ResourceThresholds, deviation bool) field.ErrorList {
	var errs field.ErrorList
	for _, t := range []struct {
		name string
		m    config.ResourceThresholds
	}{{lowName, low}, {highName, high}} {
		for r, v := range t.m {
			p := path.Child(t.name).Key(string(r))
			if v < 0 {
				errs = append(errs, field.Invalid(p, float64(v), "must not be negative"))
			}
			if r == "" || strings.ContainsAny(string(r), " \t") {
				errs = append(errs, field.Invalid(p, string(r), "is not a resource name"))
			}
		}
	}
	if deviation {
		return errs
	}
	for r, l := range low {
		if h, ok := high[r]; ok && l > h {
			errs = append(errs, field.Invalid(path.Child(lowName).Key(string(r)), float64(l), fmt.Sprintf("must not be above %s[%s] (%g)", highName, r, float64(h))))
		}
	}
	return errs
}

func validateWeights(path *field.Path, w map[corev1.ResourceName]int64) field.ErrorList {
	var errs field.ErrorList
	for r, v := range w {
		if v < 0 {
			errs = append(errs, field.Invalid(path.Key(string(r)), v, "must not be negative"))
		}
	}
	return errs
}

func validateNamespaces(path *field.Path, ns *config.Namespaces) field.ErrorList {
	if ns != nil && len(ns.Include) > 0 && len(ns.Exclude) > 0 {
		return field.ErrorList{field.Invalid(path, fmt.Sprintf("include %v, exclude %v", ns.Include, ns.Exclude), "only one of include and exclude may be set")}
	}
	return nil
}

// ValidateMigrationControllerArgs checks defaulted MigrationControllerArgs.
func ValidateMigrationControllerArgs(path *field.Path, a *config.MigrationControllerArgs) field.ErrorList {
	var errs field.ErrorList
	for i, g := range a.SkipEvictionGates {
		if !slices.Contains(config.EvictionGates, g) {
			errs = append(errs, field.NotSupported(path.Child("skipEvictionGates").Index(i), g, config.EvictionGates))
		}
	}
	for name, v := range map[string]*int32{
		"maxMigratingGlobally": a.MaxMigratingGlobally, "maxMigratingPerNode": a.MaxMigratingPerNode,
		"maxMigratingPerNamespace": a.MaxMigratingPerNamespace,
	} {
		if v != nil && *v < 0 {
			errs = append(errs, field.Invalid(path.Child(name), *v, "must not be negative"))
		}
	}
	errs = append(errs, validateIntOrPercent(path.Child("maxMigratingPerWorkload"), a.MaxMigratingPerWorkload)...)
	errs = append(errs, validateIntOrPercent(path.Child("maxUnavailablePerWorkload"), a.MaxUnavailablePerWorkload)...)
	for kind, l := range a.ObjectLimiters {
		p := path.Child("objectLimiters").Key(string(kind))
		if kind != config.MigrationLimitObjectWorkload {
			errs = append(errs, field.NotSupported(p, kind, []config.MigrationLimitObjectType{config.MigrationLimitObjectWorkload}))
		}
		if l.Duration.Duration < 0 {
			errs = append(errs, field.Invalid(p.Child("duration"), l.Duration.String(), "must not be negative"))
		}
		errs = append(errs, validateIntOrPercent(p.Child("maxMigrating"), l.MaxMigrating)...)
	}
	if a.EvictQPS != nil && a.EvictQPS.Value <= 0 {
		errs = append(errs, field.Invalid(path.Child("evictQPS"), a.EvictQPS.String(), "must be greater than 0"))
	}
	if a.EvictBurst != nil && *a.EvictBurst <= 0 {
		errs = append(errs, field.Invalid(path.Child("evictBurst"), *a.EvictBurst, "must be greater than 0"))
	}
	if a.LabelSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(a.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("labelSelector"))...)
	}
	if a.NodeSelector != "" {
		if _, err := labels.Parse(a.NodeSelector); err != nil {
			errs = append(errs, field.Invalid(path.Child("nodeSelector"), a.NodeSelector, err.Error()))
		}
	}
	errs = append(errs, validateNamespaces(path.Child("namespaces"), a.Namespaces)...)
	if a.MaxConcurrentReconciles != nil && *a.MaxConcurrentReconciles < 1 {
		errs = append(errs, field.Invalid(path.Child("maxConcurrentReconciles"), *a.MaxConcurrentReconciles, "must be at least 1"))
	}
	if a.DefaultJobMode != "ReservationFirst" && a.DefaultJobMode != "EvictDirectly" {
		errs = append(errs, field.NotSupported(path.Child("defaultJobMode"), a.DefaultJobMode, []string{"ReservationFirst", "EvictDirectly"}))
	}
	if a.DefaultJobTTL != nil && a.DefaultJobTTL.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("defaultJobTTL"), a.DefaultJobTTL.String(), "must not be negative"))
	}
	switch a.EvictionPolicy {
	case config.EvictionPolicyEviction, config.EvictionPolicyDelete, config.EvictionPolicySoftEviction:
	default:
		errs = append(errs, field.NotSupported(path.Child("evictionPolicy"), a.EvictionPolicy,
			[]string{config.EvictionPolicyEviction, config.EvictionPolicyDelete, config.EvictionPolicySoftEviction}))
	}
	if a.PriorityThreshold != nil && a.PriorityThreshold.Value != nil && a.PriorityThreshold.Name != "" {
		errs = append(errs, field.Invalid(path.Child("priorityThreshold"), a.PriorityThreshold.Name, "only one of value and name may be set"))
	}
	if a.ArbitrationArgs != nil && a.ArbitrationArgs.Interval != nil && a.ArbitrationArgs.Interval.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("arbitrationArgs", "interval"), a.ArbitrationArgs.Interval.String(), "must be greater than 0"))
	}
	return errs
}

func validateIntOrPercent(path *field.Path, v *intstr.IntOrString) field.ErrorList {
	if v == nil {
		return nil
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(v, 100, true)
	if err != nil {
		return field.ErrorList{field.Invalid(path, v.String(), err.Error())}
	}
	if n < 0 {
		return field.ErrorList{field.Invalid(path, v.String(), "must not be negative")}
	}
	return nil
}
