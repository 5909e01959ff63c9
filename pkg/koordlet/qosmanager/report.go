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

package qosmanager

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// ReasonInvalidAnnotation is the reason of the Warning Event recorded on a pod whose annotation a strategy
// could not use.
const ReasonInvalidAnnotation = "InvalidAnnotation"

// AnnotationReporter reports malformed pod annotations: once per pod, annotation and problem, as a Warning
// Event on the pod (when it has a recorder) and a log line. Strategies ignore the annotation and go on. It is
// safe for concurrent use; call Retain with the current pods each round so that its memory follows them.
type AnnotationReporter struct {
	recorder record.EventRecorder

	mu sync.Mutex
	// reported holds, per pod and annotation key, the last problem reported.
	reported map[reportKey]string
}

type reportKey struct {
	uid types.UID
	key string
}

// NewAnnotationReporter returns a reporter that records Events with recorder; nil only logs.
func NewAnnotationReporter(recorder record.EventRecorder) *AnnotationReporter {
	return &AnnotationReporter{recorder: recorder, reported: map[reportKey]string{}}
}

// Report reports that annotation key of pod cannot be used because of err, unless the same problem was
// reported for it already.
func (r *AnnotationReporter) Report(ctx context.Context, pod *corev1.Pod, key string, err error) {
	msg := fmt.Sprintf("annotation %s is ignored: %v", key, err)
	k := reportKey{uid: pod.UID, key: key}
	r.mu.Lock()
	seen := r.reported[k] == msg
	r.reported[k] = msg
	r.mu.Unlock()
	if seen {
		return
	}
	klog.FromContext(ctx).Info("Ignored a malformed pod annotation", "pod", klog.KObj(pod), "annotation", key, "err", err)
	if r.recorder != nil {
		r.recorder.Event(pod, corev1.EventTypeWarning, ReasonInvalidAnnotation, msg)
	}
}

// Retain forgets the pods not in pods.
func (r *AnnotationReporter) Retain(pods []*corev1.Pod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reported) == 0 {
		return
	}
	live := make(map[types.UID]struct{}, len(pods))
	for _, p := range pods {
		live[p.UID] = struct{}{}
	}
	for k := range r.reported {
		if _, ok := live[k.uid]; !ok {
			delete(r.reported, k)
		}
	}
}

// FormatBytes formats a byte count for Event messages with a binary suffix and at most one decimal, e.g.
// "1.2Gi", "800Mi", "512B".
func FormatBytes(b int64) string {
	neg := b < 0
	v := math.Abs(float64(b))
	units := []string{"B", "Ki", "Mi", "Gi", "Ti", "Pi"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + units[i]
	if neg {
		return "-" + s
	}
	return s
}

// FormatPercent formats a percentage for Event messages with at most one decimal, e.g. "82%", "82.5%".
func FormatPercent(p float64) string {
	return strconv.FormatFloat(math.Round(p*10)/10, 'f', -1, 64) + "%"
}

// FormatCores formats CPU cores for Event messages as milli-cores, e.g. "1500m".
func FormatCores(cores float64) string {
	return strconv.FormatInt(int64(math.Round(cores*1000)), 10) + "m"
}
