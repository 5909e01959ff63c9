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

package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	configv1alpha1 "github.com/koord-dev/koord/apis/config/v1alpha1"
	"github.com/koord-dev/koord/apis/extension"
	schedv1alpha1 "github.com/koord-dev/koord/apis/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/client/clientset/versioned"
	koordinformers "github.com/koord-dev/koord/pkg/client/informers/externalversions"
	schedlisters "github.com/koord-dev/koord/pkg/client/listers/scheduling/v1alpha1"
	"github.com/koord-dev/koord/pkg/koordctl/cluster"
	"github.com/koord-dev/koord/pkg/sim"
)

// Labels of the scenario's pods.
const (
	// LabelScenario carries the scenario's name on every pod it creates.
	LabelScenario = "demo.koord.dev/scenario"
	// LabelWorkload carries the service's or job's name.
	LabelWorkload = "demo.koord.dev/workload"
	// LabelRun carries the job run's name on the pods of a job.
	LabelRun = "demo.koord.dev/run"
	// LabelBatch marks the pods the scenario's batch ClusterColocationProfile turns into BE pods.
	LabelBatch = "demo.koord.dev/batch"
	// LabelMid marks the pods the scenario's mid ClusterColocationProfile puts on the mid tier.
	LabelMid = "demo.koord.dev/mid"
	// ProfileName names the ClusterColocationProfile that makes the batch tier's pods BE.
	ProfileName = "koord-demo-batch"
	// MidProfileName names the ClusterColocationProfile that puts the mid tier's pods on mid resources.
	MidProfileName = "koord-demo-mid"
	// SchedulerName is the scheduler of the scenario's pods.
	SchedulerName = "koord-scheduler"
	// podImage is the image of the scenario's pods; KWOK runs nothing.
	podImage = "registry.k8s.io/pause:3.10"
	// createWorkers is how many pods are created at once.
	createWorkers = 16
	// servicesLead is the wall time between reading the agents' clock and the scenario's start, for the
	// services' pods to be scheduled and run.
	servicesLead = 5 * time.Second
	// servicesPoll is how often, in wall time, the wait for the services' pods looks at them.
	servicesPoll = 100 * time.Millisecond
	// profileTimeout bounds the wait for the webhook to apply the scenario's ClusterColocationProfile.
	profileTimeout = time.Minute
)

// Snapshotter gives the simulated node agents' state; *sim.Cluster implements it.
type Snapshotter interface {
	// Snapshot returns the state of every simulated node.
	Snapshot() sim.Snapshot
}

// Env is the running cluster a scenario runs on.
type Env struct {
	// Kube and Koord are clients of the cluster.
	Kube kubernetes.Interface
	// Koord is the client of Koord's API.
	Koord versioned.Interface
	// Sim gives the simulated node agents' state.
	Sim Snapshotter
	// Nodes are the node names in the order the report lists them; the agents' (by name) when empty.
	Nodes []string
	// Speed is the speed of the agents' simulated time.
	Speed float64
	// Failed, when not nil, is closed when the cluster fails; the run then ends.
	Failed <-chan struct{}
	// Base is the wall clock; clock.RealClock when nil.
	Base sim.BaseClock
}

// ErrClusterFailed ends a run whose cluster failed.
var ErrClusterFailed = errors.New("the local cluster failed")

// Progress is told about each sample as it is recorded.
type Progress func(s *Sample)

// runner runs one scenario on a cluster.
type runner struct {
	s     *Scenario
	env   Env
	clock *sim.Clock
	// start is the simulated time of the scenario's start.
	start time.Time

	pods       corelisters.PodLister
	nodes      corelisters.NodeLister
	migrations schedlisters.PodMigrationJobLister
	// migrationPhases is the last phase seen of each PodMigrationJob of the scenario's pods, by UID: the
	// descheduler deletes ended jobs after their TTL, and the samples count every job of the run.
	migrationPhases map[types.UID]schedv1alpha1.PodMigrationJobPhase
	// migrationFailures says why each PodMigrationJob that failed or was aborted ended, by UID.
	migrationFailures map[types.UID]string

	lastTotal sim.Counters
	// nodeNames are the names of the nodes in the order of the samples' BatchCPU.
	nodeNames []string
}

// Run runs s on the cluster of env: it prepares the namespace and the ClusterColocationProfile, then follows
// the scenario's timeline on the agents' simulated time, creating the services' pods, running the jobs and
// recording a sample every sample interval, until the scenario's duration has passed, ctx ends or the cluster
// fails. It returns the node names (the order of Sample.BatchCPU) and the samples recorded, also when it ends
// early, with ctx's error or ErrClusterFailed.
func Run(ctx context.Context, s *Scenario, env Env, progress Progress) ([]string, []Sample, error) {
	logger := klog.FromContext(ctx)
	if env.Base == nil {
		env.Base = clock.RealClock{}
	}
	if progress == nil {
		progress = func(*Sample) {}
	}
	r := &runner{s: s, env: env, migrationPhases: map[types.UID]schedv1alpha1.PodMigrationJobPhase{},
		migrationFailures: map[types.UID]string{}}
	if err := r.prepare(ctx); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	factory := informers.NewSharedInformerFactoryWithOptions(env.Kube, 0)
	podFactory := informers.NewSharedInformerFactoryWithOptions(env.Kube, 0, informers.WithNamespace(s.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = LabelScenario + "=" + s.Name }))
	koordFactory := koordinformers.NewSharedInformerFactory(env.Koord, 0)
	r.nodes = factory.Core().V1().Nodes().Lister()
	r.pods = podFactory.Core().V1().Pods().Lister()
	r.migrations = koordFactory.Scheduling().V1alpha1().PodMigrationJobs().Lister()
	factory.Start(ctx.Done())
	podFactory.Start(ctx.Done())
	koordFactory.Start(ctx.Done())
	defer factory.Shutdown()
	defer podFactory.Shutdown()
	defer koordFactory.Shutdown()
	defer cancel()
	for _, synced := range []map[reflect.Type]bool{
		factory.WaitForCacheSync(ctx.Done()), podFactory.WaitForCacheSync(ctx.Done()), koordFactory.WaitForCacheSync(ctx.Done()),
	} {
		for typ, ok := range synced {
			if !ok {
				return nil, nil, fmt.Errorf("cache of %v did not sync: %w", typ, context.Cause(ctx))
			}
		}
	}
	r.nodeNames = env.Nodes
	if len(r.nodeNames) == 0 {
		for _, n := range env.Sim.Snapshot().Nodes {
			r.nodeNames = append(r.nodeNames, n.Name)
		}
	}

	// The agents' clock: read its time once, then run alongside it at the same speed. The scenario starts
	// servicesLead of wall time later, so that the services run from its start: their usage profiles are placed
	// in the scenario's clock from that start.
	snap := env.Sim.Snapshot()
	clk, err := sim.NewClock(env.Base, snap.Time, env.Speed)
	if err != nil {
		return nil, nil, err
	}
	r.clock, r.start = clk, snap.Time.Add(time.Duration(float64(servicesLead)*env.Speed))
	timeline := s.Timeline()
	for len(timeline) > 0 && timeline[0].Kind == ActionStartService {
		r.apply(ctx, timeline[0])
		timeline = timeline[1:]
	}
	if err := r.waitServices(ctx); err != nil {
		return nil, nil, err
	}
	r.lastTotal = env.Sim.Snapshot().Total
	logger.Info("Started the scenario", "scenario", s.Name, "duration", s.Duration.Duration, "speed", env.Speed,
		"simulatedStart", r.start)

	samples, err := r.loop(ctx, timeline, progress)
	return r.nodeNames, samples, err
}

// prepare creates the namespace and the ClusterColocationProfiles of the batch and mid tiers (the pods labelled
// LabelBatch become BE pods of koord-batch, those labelled LabelMid LS pods of koord-mid; the webhook turns their
// requests into batch and mid resources), and waits until koord-manager's webhook applies both.
func (r *runner) prepare(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.s.Namespace}}
	if _, err := r.env.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", r.s.Namespace, err)
	}
	for _, tier := range []struct {
		name, label string
		qos         extension.QoSClass
		class       extension.PriorityClass
		probe       *corev1.Pod
		resource    corev1.ResourceName
	}{
		{ProfileName, LabelBatch, extension.QoSBE, extension.PriorityBatch,
			r.jobPod(&Job{Name: "probe", Tier: TierBatch, Requests: probeRequests}, "probe", "probe-0", ""), extension.BatchCPU},
		{MidProfileName, LabelMid, extension.QoSLS, extension.PriorityMid,
			r.jobPod(&Job{Name: "probe", Tier: TierMid, Requests: probeRequests}, "probe", "probe-0", ""), extension.MidCPU},
	} {
		profile := &configv1alpha1.ClusterColocationProfile{
			ObjectMeta: metav1.ObjectMeta{Name: tier.name},
			Spec: configv1alpha1.ClusterColocationProfileSpec{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: r.s.Namespace}},
				Selector:          &metav1.LabelSelector{MatchLabels: map[string]string{tier.label: "true"}},
				QoSClass:          string(tier.qos),
				PriorityClassName: string(tier.class),
				SchedulerName:     SchedulerName,
			},
		}
		if err := r.applyProfile(ctx, profile, tier.probe, tier.resource); err != nil {
			return err
		}
	}
	return nil
}

// probeRequests are the requests of the dry-run pods that show when the webhook applies a profile.
var probeRequests = Resources{CPU: resource.MustParse("1"), Memory: resource.MustParse("1Gi")}

// applyProfile creates or updates profile and waits until the webhook applies it: a dry run of probe gets the
// colocation resource res.
func (r *runner) applyProfile(ctx context.Context, profile *configv1alpha1.ClusterColocationProfile, probe *corev1.Pod, res corev1.ResourceName) error {
	name := profile.Name
	profiles := r.env.Koord.ConfigV1alpha1().ClusterColocationProfiles()
	if _, err := profiles.Create(ctx, profile, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		old, err := profiles.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get ClusterColocationProfile %s: %w", name, err)
		}
		old.Spec = profile.Spec
		if _, err := profiles.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update ClusterColocationProfile %s: %w", name, err)
		}
	} else if err != nil {
		return fmt.Errorf("create ClusterColocationProfile %s: %w", name, err)
	}
	// The webhook reads profiles from koord-manager's cache: a dry run shows when it applies this one.
	var last string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, profileTimeout, true, func(ctx context.Context) (bool, error) {
		got, err := r.env.Kube.CoreV1().Pods(r.s.Namespace).Create(ctx, probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		_, ok := got.Spec.Containers[0].Resources.Requests[res]
		last = fmt.Sprintf("dry-run pod resources %v", got.Spec.Containers[0].Resources.Requests)
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("koord-manager's webhook did not apply ClusterColocationProfile %s within %s (last: %s): %w", name, profileTimeout, last, err)
	}
	return nil
}

// waitServices waits until the services' pods run or the scenario's start has come, whichever is first, and
// then until the start.
func (r *runner) waitServices(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	want := 0
	for _, svc := range r.s.Services {
		want += svc.Replicas
	}
	running := func() int {
		n := 0
		pods, _ := r.pods.Pods(r.s.Namespace).List(labels.Everything())
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning && extension.GetPodQoSClassWithDefault(p) != extension.QoSBE {
				n++
			}
		}
		return n
	}
	for {
		left := r.start.Sub(r.clock.Now())
		n := running()
		if left <= 0 {
			if n < want {
				logger.Info("Started the scenario before every service pod ran", "running", n, "replicas", want)
			}
			return nil
		}
		wait := left
		if n < want {
			wait = min(left, time.Duration(float64(servicesPoll)*r.clock.Speed()))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-r.env.Failed:
			return ErrClusterFailed
		case <-r.clock.After(wait):
		}
	}
}

// loop follows the timeline until the scenario's duration has passed, ctx ends or the cluster fails.
func (r *runner) loop(ctx context.Context, timeline []Action, progress Progress) ([]Sample, error) {
	logger := klog.FromContext(ctx)
	duration, interval := r.s.Duration.Duration, r.s.SampleInterval.Duration
	tick := min(time.Minute, interval)
	ticker := r.clock.NewTicker(tick)
	defer ticker.Stop()

	var samples []Sample
	next := time.Duration(0)
	for {
		elapsed := r.clock.Since(r.start)
		for len(timeline) > 0 && timeline[0].At <= elapsed {
			r.apply(ctx, timeline[0])
			timeline = timeline[1:]
		}
		if elapsed >= next || elapsed >= duration {
			sm := r.sample()
			samples = append(samples, sm)
			progress(&sm)
			next = (elapsed/interval + 1) * interval
		}
		if elapsed >= duration {
			logger.Info("Finished the scenario", "scenario", r.s.Name, "samples", len(samples))
			return samples, nil
		}
		select {
		case <-ctx.Done():
			return samples, ctx.Err()
		case <-r.env.Failed:
			return samples, ErrClusterFailed
		case <-ticker.C():
		}
	}
}

// apply carries out one action of the timeline.
func (r *runner) apply(ctx context.Context, a Action) {
	logger := klog.FromContext(ctx)
	switch a.Kind {
	case ActionStartService:
		svc := &r.s.Services[a.Index]
		annotation, err := r.s.UsageAnnotation(svc.Usage, r.start)
		if err != nil {
			logger.Error(err, "Could not encode the usage of a service", "service", svc.Name)
		}
		// The pods first, named <service>-<i> and some bound to their initial nodes; then the ReplicaSet, which
		// adopts them and replaces those lost (a surplus it made before it saw them, it deletes unscheduled
		// first).
		initial := r.nodeNames[:min(svc.InitialNodes, len(r.nodeNames))]
		pods := make([]*corev1.Pod, svc.Replicas)
		for i := range pods {
			pods[i] = r.servicePod(svc, fmt.Sprintf("%s-%d", svc.Name, i), annotation)
			if len(initial) > 0 {
				pods[i].Spec.NodeName = initial[i%len(initial)]
			}
		}
		created := r.create(ctx, pods)
		rs := r.replicaSet(svc, annotation)
		if _, err := r.env.Kube.AppsV1().ReplicaSets(r.s.Namespace).Create(ctx, rs, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			if ctx.Err() == nil {
				logger.Error(err, "Could not create the ReplicaSet of a service", "replicaSet", klog.KObj(rs))
			}
		}
		logger.V(2).Info("Started a service", "service", svc.Name, "pods", created, "replicas", svc.Replicas, "initialNodes", len(initial))
	case ActionStartJob:
		job := &r.s.Jobs[a.Index]
		annotation, err := r.s.UsageAnnotation(job.Usage, r.start)
		if err != nil {
			logger.Error(err, "Could not encode the usage of a job", "job", job.Name)
		}
		j := r.batchJob(job, a.Name, annotation)
		if _, err := r.env.Kube.BatchV1().Jobs(r.s.Namespace).Create(ctx, j, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			if ctx.Err() == nil {
				logger.Error(err, "Could not create a Job of the scenario", "job", klog.KObj(j))
			}
			return
		}
		logger.V(2).Info("A job arrived", "run", a.Name, "count", job.Count, "parallelism", job.Parallelism)
	}
}

// create creates pods, createWorkers at a time, and returns how many were created.
func (r *runner) create(ctx context.Context, pods []*corev1.Pod) int {
	n := 0
	for _, ok := range r.createEach(ctx, pods) {
		if ok {
			n++
		}
	}
	return n
}

// createEach creates pods, createWorkers at a time, and reports for each whether it was created (or existed).
func (r *runner) createEach(ctx context.Context, pods []*corev1.Pod) []bool {
	logger := klog.FromContext(ctx)
	ok := make([]bool, len(pods))
	var mu sync.Mutex
	logged := false
	workqueue.ParallelizeUntil(ctx, createWorkers, len(pods), func(i int) {
		_, err := r.env.Kube.CoreV1().Pods(r.s.Namespace).Create(ctx, pods[i], metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			ok[i] = true
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !logged && ctx.Err() == nil {
			logged = true
			logger.Error(err, "Could not create a pod of the scenario; retrying later", "pod", klog.KObj(pods[i]))
		}
	})
	return ok
}

// servicePod returns pod name of svc: LS, koord-prod (or koord-mid, labelled for the mid profile), for
// koord-scheduler.
func (r *runner) servicePod(svc *Service, name, usage string) *corev1.Pod {
	pod := r.pod(name, svc.Name, svc.Requests, usage)
	pod.Labels[extension.LabelPodQoS] = string(extension.QoSLS)
	pod.Spec.PriorityClassName = string(extension.PriorityProd)
	if svc.Tier == TierMid {
		pod.Labels[LabelMid] = "true"
		pod.Spec.PriorityClassName = string(extension.PriorityMid)
	}
	return pod
}

// replicaSet returns the ReplicaSet of svc: its pods' selector and template, so that it adopts the pods the
// service starts with and koord-descheduler's migrations have a workload to bound (maxUnavailablePerWorkload)
// and to place a replacement for.
func (r *runner) replicaSet(svc *Service, usage string) *appsv1.ReplicaSet {
	tmpl := r.servicePod(svc, "", usage)
	tmpl.Namespace = ""
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: svc.Name, Namespace: r.s.Namespace,
			Labels: map[string]string{LabelScenario: r.s.Name, LabelWorkload: svc.Name},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(svc.Replicas)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelScenario: r.s.Name, LabelWorkload: svc.Name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec},
		},
	}
}

// jobPod returns pod name of a run of job: koord-batch, labelled for the scenario's batch
// ClusterColocationProfile, which makes it BE and koord-manager's webhook turns its requests into batch
// resources (on the mid tier: koord-mid, labelled for the mid profile, on mid resources). KWOK completes it
// once it has run for the job's RunDuration of simulated time (AnnotationPodCompleteDelay, in wall time).
func (r *runner) jobPod(job *Job, run, name, usage string) *corev1.Pod {
	pod := r.pod(name, job.Name, job.Requests, usage)
	pod.Labels[LabelRun] = run
	if job.Tier == TierMid {
		pod.Labels[LabelMid] = "true"
	} else {
		pod.Labels[LabelBatch] = "true"
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	speed := r.env.Speed
	if speed <= 0 {
		speed = 1
	}
	wall := time.Duration(float64(job.RunDuration.Duration) / speed)
	pod.Annotations[cluster.AnnotationPodCompleteDelay] = wall.Round(time.Millisecond).String()
	pod.Spec.PriorityClassName = string(extension.PriorityBatch)
	if job.Tier == TierMid {
		pod.Spec.PriorityClassName = string(extension.PriorityMid)
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	return pod
}

// batchJob returns the Job of a run of job: Count completions, Parallelism pods at a time, from jobPod's
// template. kube-controller-manager's Job controller creates the pods and replaces lost ones; pods evicted by
// the node agents (condition DisruptionTarget) do not count against the backoff limit.
func (r *runner) batchJob(job *Job, run, usage string) *batchv1.Job {
	tmpl := r.jobPod(job, run, "", usage)
	tmpl.Namespace = ""
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: run, Namespace: r.s.Namespace,
			Labels: map[string]string{LabelScenario: r.s.Name, LabelWorkload: job.Name, LabelRun: run},
		},
		Spec: batchv1.JobSpec{
			Completions:  ptr.To(int32(job.Count)),
			Parallelism:  ptr.To(int32(job.Parallelism)),
			BackoffLimit: ptr.To(int32(job.Count)),
			PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action:          batchv1.PodFailurePolicyActionIgnore,
				OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
			}}},
			Template: corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec},
		},
	}
}

// pod returns the common part of the scenario's pods.
func (r *runner) pod(name, workload string, req Resources, usage string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: r.s.Namespace,
			Labels:    map[string]string{LabelScenario: r.s.Name, LabelWorkload: workload},
		},
		Spec: corev1.PodSpec{
			SchedulerName: SchedulerName,
			Containers: []corev1.Container{{
				Name:  "main",
				Image: podImage,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    req.CPU.DeepCopy(),
					corev1.ResourceMemory: req.Memory.DeepCopy(),
				}},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](0),
		},
	}
	if usage != "" {
		pod.Annotations = map[string]string{sim.AnnotationUsage: usage}
	}
	return pod
}

// sample records the cluster's state: usage from the agents' snapshot, batch and mid allocatable from the
// Nodes, pods from the apiserver (through the informers' caches), and the agents' counters since the last sample.
func (r *runner) sample() Sample {
	snap := r.env.Sim.Snapshot()
	s := Sample{Elapsed: snap.Time.Sub(r.start), SimTime: snap.Time, Nodes: len(snap.Nodes)}
	for _, n := range snap.Nodes {
		s.CPUCapacity += n.CPUCapacity
		s.NodeCPU += n.Last.NodeCPU
		s.LSCPU += n.Last.LSCPU
		s.MidUsedCPU += n.Last.MidCPU
		s.BECPU += n.Last.BECPU
		s.BEDemandCPU += n.Last.BEDemandCPU
	}
	util := make(map[string]float64, len(snap.Nodes))
	for _, n := range snap.Nodes {
		util[n.Name] = percent(n.Last.NodeCPU, n.CPUCapacity)
	}
	s.NodeUtil = make([]float64, len(r.nodeNames))
	for i, name := range r.nodeNames {
		s.NodeUtil[i] = math.NaN()
		if u, ok := util[name]; ok {
			s.NodeUtil[i] = u
		}
	}
	s.Migrations, s.MigrationsSucceeded, s.MigrationsFailed = r.countMigrations()
	s.FailedMigrations = slices.Sorted(maps.Values(r.migrationFailures))
	s.BatchCPU = make([]float64, len(r.nodeNames))
	s.MidCPU = make([]float64, len(r.nodeNames))
	for i, name := range r.nodeNames {
		s.BatchCPU[i], s.MidCPU[i] = math.NaN(), math.NaN()
		node, err := r.nodes.Get(name)
		if err != nil {
			continue
		}
		// batch-cpu and mid-cpu are in milli-cores.
		if q, ok := node.Status.Allocatable[extension.BatchCPU]; ok {
			s.BatchCPU[i] = float64(q.Value()) / 1000
		}
		if q, ok := node.Status.Allocatable[extension.MidCPU]; ok {
			s.MidCPU[i] = float64(q.Value()) / 1000
		}
	}
	pods, _ := r.pods.Pods(r.s.Namespace).List(labels.Everything())
	for _, p := range pods {
		be := extension.GetPodQoSClassWithDefault(p) == extension.QoSBE
		mid := !be && extension.GetPodPriorityClassWithDefault(p) == extension.PriorityMid
		switch {
		case p.Status.Phase == corev1.PodSucceeded && be:
			s.BECompleted++
		case p.Status.Phase == corev1.PodSucceeded && mid:
			s.MidCompleted++
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodRunning && be:
			s.BERunning++
		case p.Status.Phase == corev1.PodRunning && mid:
			s.MidRunning++
		case p.Status.Phase == corev1.PodRunning:
			s.LSRunning++
		case p.Status.Phase == corev1.PodPending && be:
			s.BEPending++
		case p.Status.Phase == corev1.PodPending && mid:
			s.MidPending++
		}
	}
	t := snap.Total
	s.Suppressed = t.SuppressedMoments - r.lastTotal.SuppressedMoments
	s.Evictions = t.Evictions - r.lastTotal.Evictions
	s.LSBreaches = t.LSThresholdBreaches - r.lastTotal.LSThresholdBreaches
	r.lastTotal = t
	return s
}

// countMigrations records the phase of each PodMigrationJob of the scenario's pods in the cache and returns how
// many the run has had, and how many of them succeeded and failed (or were aborted); it keeps why each failed
// one ended in migrationFailures.
func (r *runner) countMigrations() (total, succeeded, failed int) {
	jobs, _ := r.migrations.List(labels.Everything())
	for _, j := range jobs {
		if j.Spec.PodRef == nil || j.Spec.PodRef.Namespace != r.s.Namespace {
			continue
		}
		r.migrationPhases[j.UID] = j.Status.Phase
		if j.Status.Phase == schedv1alpha1.PodMigrationJobFailed || j.Status.Phase == schedv1alpha1.PodMigrationJobAborted {
			r.migrationFailures[j.UID] = fmt.Sprintf("%s: %s, %s: %s", j.Name, j.Status.Phase, j.Status.Reason, j.Status.Message)
		}
	}
	for _, phase := range r.migrationPhases {
		total++
		switch phase {
		case schedv1alpha1.PodMigrationJobSucceeded:
			succeeded++
		case schedv1alpha1.PodMigrationJobFailed, schedv1alpha1.PodMigrationJobAborted:
			failed++
		}
	}
	return total, succeeded, failed
}
