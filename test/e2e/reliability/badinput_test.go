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

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/koord-dev/koord/apis/configuration"
	"github.com/koord-dev/koord/apis/extension"
	slov1alpha1 "github.com/koord-dev/koord/apis/slo/v1alpha1"
	schedsigsv1alpha1 "github.com/koord-dev/koord/apis/thirdparty/schedulingsigs/v1alpha1"
	"github.com/koord-dev/koord/test/fuzzseeds"
)

// badValues are the values a mutation puts where a field was: wrong types, out-of-range numbers, malformed
// quantities and durations, huge and odd strings, nesting.
var badValues = []any{
	-1, 0, 2147483648, 1e300, -0.5, "", "not-a-quantity", "-1", "1e999", "1Ki", "-5m", "999999999999999999999",
	strings.Repeat("x", 70000), []any{}, map[string]any{}, nil, true, "ü\u0000\u202e", "5m5m",
	map[string]any{"a": map[string]any{"b": []any{1, "2", nil}}}, []any{"x", -1, map[string]any{}},
}

// mutate returns a copy of v (a decoded JSON value) with one random change below it: a value replaced by a bad
// one, a key deleted, an unknown key added, or the whole value replaced.
func mutate(r *rand.Rand, v any) any {
	v = deepCopy(v)
	switch r.IntN(10) {
	case 0:
		return badValues[r.IntN(len(badValues))]
	default:
		return mutateIn(r, v)
	}
}

func mutateIn(r *rand.Rand, v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 || r.IntN(6) == 0 {
			x[fmt.Sprintf("unknown%d", r.IntN(100))] = badValues[r.IntN(len(badValues))]
			return x
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		k := keys[r.IntN(len(keys))]
		switch r.IntN(4) {
		case 0:
			delete(x, k)
		case 1:
			x[k] = badValues[r.IntN(len(badValues))]
		default:
			x[k] = mutateIn(r, x[k])
		}
		return x
	case []any:
		if len(x) == 0 {
			return append(x, badValues[r.IntN(len(badValues))])
		}
		i := r.IntN(len(x))
		x[i] = mutateIn(r, x[i])
		return x
	default:
		return badValues[r.IntN(len(badValues))]
	}
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// outcome counts the answers to one class of input.
type outcome struct {
	class    string
	tried    int
	accepted int
	rejected int
	// failed are answers that are neither: a server error or a timeout, i.e. a component that could not
	// judge the input (a webhook that crashed, say).
	failed []string
}

// record counts the answer err to one input.
func (o *outcome) record(err error) {
	o.tried++
	switch {
	case err == nil:
		o.accepted++
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsForbidden(err),
		apierrors.IsRequestEntityTooLargeError(err), apierrors.IsAlreadyExists(err), apierrors.IsNotFound(err):
		o.rejected++
	default:
		o.failed = append(o.failed, err.Error())
	}
}

// kinds are a valid object of each Koord kind a user writes, with its resource.
var kinds = []struct {
	gvr    schema.GroupVersionResource
	object string
}{
	{schema.GroupVersionResource{Group: "config.koordinator.sh", Version: "v1alpha1", Resource: "clustercolocationprofiles"},
		`{"apiVersion":"config.koordinator.sh/v1alpha1","kind":"ClusterColocationProfile","spec":{"selector":{"matchLabels":{"bad-input":"x"}},"qosClass":"BE","priorityClassName":"koord-batch","koordinatorPriority":1111,"schedulerName":"koord-scheduler","labels":{"x":"y"}}}`},
	{schema.GroupVersionResource{Group: "scheduling.sigs.k8s.io", Version: "v1alpha1", Resource: "elasticquotas"},
		`{"apiVersion":"scheduling.sigs.k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"namespace":"default"},"spec":{"min":{"cpu":"1","memory":"1Gi"},"max":{"cpu":"2","memory":"2Gi"}}}`},
	{schema.GroupVersionResource{Group: "scheduling.koordinator.sh", Version: "v1alpha1", Resource: "reservations"},
		`{"apiVersion":"scheduling.koordinator.sh/v1alpha1","kind":"Reservation","spec":{"template":{"metadata":{"namespace":"default"},"spec":{"schedulerName":"koord-scheduler","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"100m"}}}]}},"owners":[{"object":{"name":"nobody","namespace":"default"}}],"ttl":"2m"}}`},
	{schema.GroupVersionResource{Group: "scheduling.koordinator.sh", Version: "v1alpha1", Resource: "podmigrationjobs"},
		`{"apiVersion":"scheduling.koordinator.sh/v1alpha1","kind":"PodMigrationJob","spec":{"podRef":{"namespace":"default","name":"nobody"},"mode":"ReservationFirst","ttl":"1m"}}`},
	{schema.GroupVersionResource{Group: "scheduling.sigs.k8s.io", Version: "v1alpha1", Resource: "podgroups"},
		`{"apiVersion":"scheduling.sigs.k8s.io/v1alpha1","kind":"PodGroup","metadata":{"namespace":"default"},"spec":{"minMember":2,"scheduleTimeoutSeconds":30}}`},
	{schema.GroupVersionResource{Group: "quota.koordinator.sh", Version: "v1alpha1", Resource: "elasticquotaprofiles"},
		`{"apiVersion":"quota.koordinator.sh/v1alpha1","kind":"ElasticQuotaProfile","metadata":{"namespace":"default"},"spec":{"quotaName":"bad-input","nodeSelector":{"matchLabels":{"bad-input":"x"}}}}`},
}

// podAnnotations are Koordinator annotations pods carry, each with a valid value to mutate.
var podAnnotations = map[string]string{
	extension.AnnotationResourceSpec:        `{"preferredCPUBindPolicy":"FullPCPUs"}`,
	extension.AnnotationResourceStatus:      `{"cpuset":"0-1"}`,
	extension.AnnotationReservationAffinity: `{"reservationSelector":{"a":"b"}}`,
	extension.AnnotationGangName:            `g`,
	extension.AnnotationGangMinNum:          `2`,
	extension.AnnotationGangWaitTime:        `30s`,
	extension.AnnotationGangMode:            `Strict`,
	extension.AnnotationGangGroups:          `["default/g"]`,
	extension.AnnotationPodEvictionPriority: `5`,
	extension.AnnotationPodEvictPolicy:      `["BEMemoryEvict"]`,
	extension.AnnotationDeviceAllocateHint:  `{"gpu":{"allocateStrategy":"ApplyForAll"}}`,
}

// nodeAnnotations are Koordinator annotations nodes carry, each with a valid value to mutate.
var nodeAnnotations = map[string]string{
	extension.AnnotationNodeColocationStrategy: `{"enable":true}`,
	extension.AnnotationNodeReservation:        `{"resources":{"cpu":"1"}}`,
	extension.AnnotationCPUNormalizationRatio:  `1.2`,
	extension.AnnotationNodeUsageThresholds:    `{"usageThresholds":{"cpu":65}}`,
}

// mutateString mutates a value given as text: a JSON value is decoded, mutated and encoded again (a mutation
// that leaves a string gives the string itself, not JSON); other text is a string to mutate.
func mutateString(r *rand.Rand, s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		v = s
	}
	m := mutate(r, v)
	if str, ok := m.(string); ok {
		return str
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// TestBadInput writes generated invalid and random values into every Koord kind, Koordinator's pod and node
// annotations and the SLO ConfigMap, plus objects over the apiserver's size limits, and checks that each is
// judged (accepted, or rejected with a client error), that no component crashes, that the SLO configuration in
// force is kept, and that the system still serves afterwards. It reports what it tried.
func TestBadInput(t *testing.T) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(20261203, 1))
	dyn := dynamic.NewForConfigOrDie(env.c.RESTConfig())
	var outcomes []*outcome
	var cleanup []func()
	defer func() {
		for _, f := range cleanup {
			f()
		}
	}()
	bg := context.WithoutCancel(ctx)

	for _, k := range kinds {
		o := &outcome{class: k.gvr.Resource}
		var valid map[string]any
		if err := json.Unmarshal([]byte(k.object), &valid); err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			obj := deepCopy(valid).(map[string]any)
			obj["spec"] = mutate(r, obj["spec"])
			meta, _ := obj["metadata"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["name"] = fmt.Sprintf("bad-input-%d", i)
			obj["metadata"] = meta
			u := &unstructured.Unstructured{Object: obj}
			res := dyn.Resource(k.gvr)
			var client dynamic.ResourceInterface = res
			if ns := u.GetNamespace(); ns != "" {
				client = res.Namespace(ns)
			}
			_, err := client.Create(ctx, u, metav1.CreateOptions{})
			o.record(err)
			if err == nil {
				name := u.GetName()
				cleanup = append(cleanup, func() { _ = client.Delete(bg, name, metav1.DeleteOptions{}) })
			}
		}
		outcomes = append(outcomes, o)
	}

	podOutcome := &outcome{class: "pod annotations"}
	keys := make([]string, 0, len(podAnnotations))
	for k := range podAnnotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		for i := range 10 {
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("bad-%s-%d", strings.NewReplacer("/", "-", ".", "-").Replace(key), i),
					Annotations: map[string]string{key: mutateString(r, podAnnotations[key])}, Labels: map[string]string{"app": "bad-input"}},
				Spec: corev1.PodSpec{SchedulerName: "koord-scheduler", TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}},
			}
			_, err := env.kube.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{})
			podOutcome.record(err)
		}
	}
	cleanup = append(cleanup, func() {
		_ = env.kube.CoreV1().Pods(namespace).DeleteCollection(bg, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)},
			metav1.ListOptions{LabelSelector: "app=bad-input"})
	})
	outcomes = append(outcomes, podOutcome)

	nodeOutcome := &outcome{class: "node annotations"}
	node := env.c.NodeNames()[0]
	for key, valid := range nodeAnnotations {
		for range 10 {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: mutateString(r, valid)}}})
			_, err := env.kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
			nodeOutcome.record(err)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: nil}}})
		cleanup = append(cleanup, func() {
			_, _ = env.kube.CoreV1().Nodes().Patch(bg, node, types.MergePatchType, patch, metav1.PatchOptions{})
		})
	}
	outcomes = append(outcomes, nodeOutcome)

	// The SLO ConfigMap: every key garbled in turn; the webhook refuses, the configuration in force stays.
	cmOutcome := &outcome{class: "slo-controller-config"}
	cm, err := env.kube.CoreV1().ConfigMaps(configuration.ConfigNamespace).Get(ctx, configuration.SLOCtrlConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The NodeSLO in force, once it has settled (a cluster just started may still be rendering it).
	var sloBefore *slov1alpha1.NodeSLO
	if err := waitFor(ctx, time.Minute, "the NodeSLO settled", func(ctx context.Context) (bool, error) {
		first, err := env.koord.SloV1alpha1().NodeSLOs().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		time.Sleep(3 * time.Second)
		second, err := env.koord.SloV1alpha1().NodeSLOs().Get(ctx, node, metav1.GetOptions{})
		sloBefore = second
		return err == nil && first.ResourceVersion == second.ResourceVersion, err
	}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{configuration.ColocationConfigKey, configuration.ResourceThresholdConfigKey, configuration.ResourceQOSConfigKey,
		configuration.CPUBurstConfigKey, configuration.SystemConfigKey, configuration.HostApplicationConfigKey} {
		valid := cm.Data[key]
		if valid == "" {
			valid = `{"clusterStrategy":{"enable":true}}`
		}
		for range 8 {
			bad := cm.DeepCopy()
			bad.Data[key] = mutateString(r, valid)
			_, err := env.kube.CoreV1().ConfigMaps(bad.Namespace).Update(ctx, bad, metav1.UpdateOptions{})
			cmOutcome.record(err)
			if err == nil {
				// Accepted (the mutation left it valid): put the original back before the next one.
				current, err := env.kube.CoreV1().ConfigMaps(bad.Namespace).Get(ctx, bad.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				current.Data[key] = cm.Data[key]
				if cm, err = env.kube.CoreV1().ConfigMaps(bad.Namespace).Update(ctx, current, metav1.UpdateOptions{}); err != nil {
					t.Fatalf("restore the SLO ConfigMap: %v", err)
				}
			}
		}
	}
	outcomes = append(outcomes, cmOutcome)

	// The fuzz targets' seed corpora, each value on a real object.
	seeded, seedCleanup := writeSeedCorpora(ctx, node)
	outcomes = append(outcomes, seeded...)
	cleanup = append(cleanup, seedCleanup...)

	// Over the size limits: annotations over 256KiB, a ConfigMap over 1MiB, a request over 3MiB.
	big := &outcome{class: "oversize objects"}
	huge := strings.Repeat("x", 300<<10)
	_, err = env.kube.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bad-input-huge",
		Annotations: map[string]string{extension.AnnotationResourceSpec: huge}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}, metav1.CreateOptions{})
	big.record(err)
	_, err = env.kube.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bad-input-huge"},
		Data: map[string]string{"x": strings.Repeat("y", 1200<<10)}}, metav1.CreateOptions{})
	big.record(err)
	_, err = env.kube.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bad-input-huger"},
		Data: map[string]string{"x": strings.Repeat("y", 4<<20)}}, metav1.CreateOptions{})
	big.record(err)
	outcomes = append(outcomes, big)

	// Let the components chew on what was accepted, then check they all still run and serve.
	time.Sleep(10 * time.Second)
	if err := env.c.Err(); err != nil {
		t.Errorf("a component failed on bad input: %v", err)
	}
	if err := recovered(ctx, 1000); err != nil {
		t.Errorf("the system does not serve after the bad input: %v", err)
	}
	// Garbled versions were refused; those the mutation left valid were applied and the original put back: the
	// NodeSLO returns to what it was.
	var diff string
	if err := waitFor(ctx, time.Minute, "the NodeSLO back to the SLO configuration in force", func(ctx context.Context) (bool, error) {
		after, err := env.koord.SloV1alpha1().NodeSLOs().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		diff = cmp.Diff(sloBefore.Spec, after.Spec)
		return diff == "", nil
	}); err != nil {
		t.Errorf("%v (-before,+after):\n%s", err, diff)
	}

	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INPUT\tTRIED\tREJECTED\tACCEPTED\tNOT JUDGED")
	total := 0
	for _, o := range outcomes {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", o.class, o.tried, o.rejected, o.accepted, len(o.failed))
		total += o.tried
		for _, f := range o.failed {
			t.Errorf("%s: an input was not judged: %s", o.class, f)
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "\n%d bad inputs tried; no component crashed\n", total)
	t.Log("\n" + b.String())
	if path := reportPath(); path != "" {
		appendReport(t, path, b.String())
	}
}

// podSeedCorpora are the fuzz targets' seed corpora for pod annotations, by annotation key. The gang annotations
// come with a gang name, without which the scheduler would not read them.
var podSeedCorpora = map[string][]string{
	extension.AnnotationResourceSpec:         fuzzseeds.ResourceSpec,
	extension.AnnotationResourceStatus:       fuzzseeds.ResourceStatus,
	extension.AnnotationDeviceAllocated:      fuzzseeds.DeviceAllocations,
	extension.AnnotationReservationAffinity:  fuzzseeds.ReservationAffinity,
	extension.AnnotationReservationAllocated: fuzzseeds.ReservationAllocated,
	extension.AnnotationExtendedResourceSpec: fuzzseeds.ExtendedResourceSpec,
	extension.AnnotationGangMinNum:           fuzzseeds.GangMinNum,
	extension.AnnotationGangTotalNum:         fuzzseeds.GangTotalNumber,
	extension.AnnotationGangWaitTime:         fuzzseeds.GangWaitingTime,
	extension.AnnotationGangMode:             fuzzseeds.GangMode,
	extension.AnnotationGangMatchPolicy:      fuzzseeds.GangMatchPolicy,
	extension.AnnotationGangGroups:           fuzzseeds.GangGroups,
}

// nodeSeedCorpora are the fuzz targets' seed corpora for node annotations, by annotation key.
var nodeSeedCorpora = map[string][]string{
	extension.AnnotationNodeUsageThresholds: fuzzseeds.CustomUsageThresholds,
	extension.AnnotationNodeReservation:     fuzzseeds.NodeReservation,
}

// quotaSeedCorpora are the fuzz targets' seed corpora for ElasticQuota annotations, by annotation key.
var quotaSeedCorpora = map[string][]string{
	extension.AnnotationSharedWeight:    fuzzseeds.QuotaResourceList,
	extension.AnnotationQuotaNamespaces: fuzzseeds.QuotaNamespaces,
}

// writeSeedCorpora writes every value of the fuzz targets' seed corpora (package fuzzseeds) onto a real
// object through the apiserver: pods (annotations, and the koordinator.sh/priority label), node's annotations
// and ElasticQuotas' annotations. It returns what it tried and the clean-ups.
func writeSeedCorpora(ctx context.Context, node string) ([]*outcome, []func()) {
	bg := context.WithoutCancel(ctx)
	var cleanup []func()
	pods := &outcome{class: "fuzz seeds: pods"}
	n := 0
	newPod := func() *corev1.Pod {
		n++
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("seed-%d", n),
				Annotations: map[string]string{}, Labels: map[string]string{"app": "bad-input"}},
			Spec: corev1.PodSpec{SchedulerName: "koord-scheduler", TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}}},
		}
	}
	for _, key := range slices.Sorted(maps.Keys(podSeedCorpora)) {
		for _, v := range podSeedCorpora[key] {
			p := newPod()
			p.Annotations[key] = v
			if strings.HasPrefix(key, extension.GangDomainPrefix) {
				p.Annotations[extension.AnnotationGangName] = "seed-gang"
			}
			_, err := env.kube.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{})
			pods.record(err)
		}
	}
	for _, v := range fuzzseeds.PodSubPriority {
		p := newPod()
		p.Labels[extension.LabelPodPriority] = v
		_, err := env.kube.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{})
		pods.record(err)
	}
	// The pods are labelled app=bad-input: TestBadInput's clean-up deletes them.

	nodes := &outcome{class: "fuzz seeds: node annotations"}
	for _, key := range slices.Sorted(maps.Keys(nodeSeedCorpora)) {
		for _, v := range nodeSeedCorpora[key] {
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
			_, err := env.kube.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
			nodes.record(err)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: nil}}})
		cleanup = append(cleanup, func() {
			_, _ = env.kube.CoreV1().Nodes().Patch(bg, node, types.MergePatchType, patch, metav1.PatchOptions{})
		})
	}

	quotas := &outcome{class: "fuzz seeds: quota annotations"}
	qn := 0
	for _, key := range slices.Sorted(maps.Keys(quotaSeedCorpora)) {
		for _, v := range quotaSeedCorpora[key] {
			qn++
			q := &schedsigsv1alpha1.ElasticQuota{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("seed-%d", qn), Annotations: map[string]string{key: v}},
				Spec: schedsigsv1alpha1.ElasticQuotaSpec{
					Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")},
				},
			}
			_, err := env.koord.SchedulingSigsV1alpha1().ElasticQuotas(namespace).Create(ctx, q, metav1.CreateOptions{})
			quotas.record(err)
			if err == nil {
				name := q.Name
				cleanup = append(cleanup, func() {
					_ = env.koord.SchedulingSigsV1alpha1().ElasticQuotas(namespace).Delete(bg, name, metav1.DeleteOptions{})
				})
			}
		}
	}
	return []*outcome{pods, nodes, quotas}, cleanup
}
