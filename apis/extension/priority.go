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

package extension

import (
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// PriorityClass is the Koordinator priority class of a pod. It is derived from
// the koordinator.sh/priority-class label or from the band spec.priority falls
// in.
type PriorityClass string

// Koordinator priority classes.
const (
	// PriorityProd is for production workloads on allocated resources.
	PriorityProd PriorityClass = "koord-prod"
	// PriorityMid is for workloads on the reclaimed mid resources.
	PriorityMid PriorityClass = "koord-mid"
	// PriorityBatch is for batch workloads on the reclaimed batch resources.
	PriorityBatch PriorityClass = "koord-batch"
	// PriorityFree is for workloads that may take whatever is left.
	PriorityFree PriorityClass = "koord-free"
	// PriorityNone means no Koordinator priority class.
	PriorityNone PriorityClass = ""
)

// Priority value bands of the priority classes, both ends inclusive, and the
// value a pod of each class gets by default.
const (
	// PriorityProdValueMax is the highest koord-prod priority.
	PriorityProdValueMax int32 = 9999
	// PriorityProdValueMin is the lowest koord-prod priority.
	PriorityProdValueMin int32 = 9000
	// PriorityProdValueDefault is the default koord-prod priority.
	PriorityProdValueDefault int32 = 9500

	// PriorityMidValueMax is the highest koord-mid priority.
	PriorityMidValueMax int32 = 7999
	// PriorityMidValueMin is the lowest koord-mid priority.
	PriorityMidValueMin int32 = 7000
	// PriorityMidValueDefault is the default koord-mid priority.
	PriorityMidValueDefault int32 = 7500

	// PriorityBatchValueMax is the highest koord-batch priority.
	PriorityBatchValueMax int32 = 5999
	// PriorityBatchValueMin is the lowest koord-batch priority.
	PriorityBatchValueMin int32 = 5000
	// PriorityBatchValueDefault is the default koord-batch priority.
	PriorityBatchValueDefault int32 = 5500

	// PriorityFreeValueMax is the highest koord-free priority.
	PriorityFreeValueMax int32 = 3999
	// PriorityFreeValueMin is the lowest koord-free priority.
	PriorityFreeValueMin int32 = 3000
	// PriorityFreeValueDefault is the default koord-free priority.
	PriorityFreeValueDefault int32 = 3500

	// PriorityNoneValueDefault is the priority of a pod without a class.
	PriorityNoneValueDefault int32 = 0
)

// Range returns the inclusive priority band of p. ok is false for
// PriorityNone and unknown classes.
func (p PriorityClass) Range() (lo, hi int32, ok bool) {
	switch p {
	case PriorityProd:
		return PriorityProdValueMin, PriorityProdValueMax, true
	case PriorityMid:
		return PriorityMidValueMin, PriorityMidValueMax, true
	case PriorityBatch:
		return PriorityBatchValueMin, PriorityBatchValueMax, true
	case PriorityFree:
		return PriorityFreeValueMin, PriorityFreeValueMax, true
	}
	return 0, 0, false
}

// DefaultValue returns the priority a pod of class p gets by default, and
// PriorityNoneValueDefault for PriorityNone and unknown classes.
func (p PriorityClass) DefaultValue() int32 {
	switch p {
	case PriorityProd:
		return PriorityProdValueDefault
	case PriorityMid:
		return PriorityMidValueDefault
	case PriorityBatch:
		return PriorityBatchValueDefault
	case PriorityFree:
		return PriorityFreeValueDefault
	}
	return PriorityNoneValueDefault
}

// GetPriorityClassByName returns the priority class named name, or
// PriorityNone when name is not a known class.
func GetPriorityClassByName(name string) PriorityClass {
	switch p := PriorityClass(name); p {
	case PriorityProd, PriorityMid, PriorityBatch, PriorityFree:
		return p
	}
	return PriorityNone
}

// GetPriorityClassByValue returns the class whose band holds priority, or
// PriorityNone when priority is outside every band.
func GetPriorityClassByValue(priority int32) PriorityClass {
	for _, p := range [...]PriorityClass{PriorityProd, PriorityMid, PriorityBatch, PriorityFree} {
		if lo, hi, _ := p.Range(); lo <= priority && priority <= hi {
			return p
		}
	}
	return PriorityNone
}

// GetPodPriorityClassRaw returns the class in the pod's
// koordinator.sh/priority-class label if it names a known class, else the
// class of the band spec.priority falls in, else PriorityNone.
func GetPodPriorityClassRaw(pod *corev1.Pod) PriorityClass {
	if pod == nil {
		return PriorityNone
	}
	if p := GetPriorityClassByName(pod.Labels[LabelPodPriorityClass]); p != PriorityNone {
		return p
	}
	if pod.Spec.Priority == nil {
		return PriorityNone
	}
	return GetPriorityClassByValue(*pod.Spec.Priority)
}

// GetPodPriorityClassWithDefault returns GetPodPriorityClassRaw and, when that
// is PriorityNone, the class derived from the pod's QoS class (see
// GetPodPriorityClassWithQoS). It returns PriorityNone only for a nil pod.
func GetPodPriorityClassWithDefault(pod *corev1.Pod) PriorityClass {
	if p := GetPodPriorityClassRaw(pod); p != PriorityNone {
		return p
	}
	return GetPodPriorityClassWithQoS(GetPodQoSClassWithDefault(pod))
}

// GetPodPriorityClassWithQoS returns the priority class a pod of the given
// QoS class has by default: SYSTEM, LSE, LSR and LS map to koord-prod, BE to
// koord-batch, anything else to PriorityNone. The converse does not hold: a
// koord-mid pod may well be LS.
func GetPodPriorityClassWithQoS(qos QoSClass) PriorityClass {
	switch qos {
	case QoSSystem, QoSLSE, QoSLSR, QoSLS:
		return PriorityProd
	case QoSBE:
		return PriorityBatch
	}
	return PriorityNone
}

// GetPodSubPriority returns the sub-priority in the koordinator.sh/priority
// label: 0 when the label is missing or empty, an error naming the label when
// it is not a base-10 int32.
func GetPodSubPriority(labels map[string]string) (int32, error) {
	s, ok := lookup(labels, LabelPodPriority)
	if !ok {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		if ne, ok := errors.AsType[*strconv.NumError](err); ok {
			err = ne.Err
		}
		return 0, &LabelError{Key: LabelPodPriority, Value: s, Err: fmt.Errorf("%q is not an int32: %w", s, err)}
	}
	return int32(v), nil
}
