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

package sloconfig

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/koord-dev/koord/apis/configuration"
)

// Event reasons and actions on the ConfigMap.
const (
	// ReasonInvalidSLOConfig is the reason of the Warning Event on a ConfigMap version that was rejected.
	ReasonInvalidSLOConfig = "InvalidSLOConfig"
	// ReasonUnknownSLOConfigFields is the reason of the Warning Event on a ConfigMap version that was applied
	// without fields Koord does not know.
	ReasonUnknownSLOConfigFields = "UnknownSLOConfigFields"
	// actionLoad is the action of the Events the loader emits.
	actionLoad = "LoadSLOConfig"
	// maxEventNote is the longest Event note the events API accepts, in bytes.
	maxEventNote = 1024
)

// LoaderOptions locate the ConfigMap. Empty fields take the defaults, koordinator-system/slo-controller-config.
type LoaderOptions struct {
	// Namespace is the ConfigMap's namespace.
	Namespace string
	// Name is the ConfigMap's name.
	Name string
	// Metrics records the loads; private, unregistered ones when nil.
	Metrics *Metrics
}

// Key returns the ConfigMap's namespace and name, with the defaults for empty fields.
func (o LoaderOptions) Key() types.NamespacedName {
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
	if key.Namespace == "" {
		key.Namespace = configuration.ConfigNamespace
	}
	if key.Name == "" {
		key.Name = configuration.SLOCtrlConfigMap
	}
	return key
}

// +kubebuilder:rbac:groups="",namespace=koordinator-system,resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,namespace=koordinator-system,resources=events,verbs=create;patch

// Loader reconciles the ConfigMap into the Store. Every request is for the ConfigMap, whatever its name.
type Loader struct {
	reader   client.Reader
	store    *Store
	recorder events.EventRecorder
	key      types.NamespacedName
	metrics  *Metrics
	// lastRejected is the resourceVersion last rejected, so that a resync reports it only once. Requests for one
	// key are never processed concurrently, so it needs no lock.
	lastRejected string
	// lastWarned is the resourceVersion whose unknown fields were last reported, for the same reason.
	lastWarned string
}

var _ reconcile.Reconciler = (*Loader)(nil)

// NewLoader returns a Loader that reads the ConfigMap through reader and reports rejected versions through
// recorder.
func NewLoader(reader client.Reader, store *Store, recorder events.EventRecorder, opts LoaderOptions) *Loader {
	m := opts.Metrics
	if m == nil {
		m = NewMetrics()
	}
	return &Loader{reader: reader, store: store, recorder: recorder, key: opts.Key(), metrics: m}
}

// SetupLoader registers the loader with mgr. The ConfigMap is watched through a cache of its own that holds only
// that object, so koord-manager does not cache every ConfigMap of the cluster. A first request at start-up finds
// a missing ConfigMap too, so the store gets synced with the defaults.
func SetupLoader(mgr ctrl.Manager, store *Store, opts LoaderOptions) error {
	key := opts.Key()
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{key.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Field: fields.OneTermEqualSelector("metadata.name", key.Name)},
		},
	})
	if err != nil {
		return fmt.Errorf("slo config cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("slo config cache: %w", err)
	}
	l := NewLoader(c, store, mgr.GetEventRecorder("koord-manager"), opts)
	start := make(chan event.TypedGenericEvent[*corev1.ConfigMap], 1)
	start <- event.TypedGenericEvent[*corev1.ConfigMap]{
		Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}},
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("sloconfig").
		WatchesRawSource(source.Kind(c, &corev1.ConfigMap{}, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{})).
		WatchesRawSource(source.Channel(start, &handler.TypedEnqueueRequestForObject[*corev1.ConfigMap]{})).
		Complete(l)
}

// Reconcile loads the current version of the ConfigMap: a missing ConfigMap installs the defaults, a valid one
// its snapshot, and an invalid one is reported and leaves the snapshot in force alone. Errors reading the
// ConfigMap are returned for a retry; a rejected version is not retried, its next edit is.
func (l *Loader) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := ctrl.LoggerFrom(ctx).WithValues("configMap", klog.KRef(l.key.Namespace, l.key.Name))
	cm := &corev1.ConfigMap{}
	if err := l.reader.Get(ctx, l.key, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, fmt.Errorf("reading ConfigMap %s: %w", l.key, err)
		}
		l.metrics.configValid.Set(1)
		l.lastRejected = ""
		stub := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: l.key.Namespace, Name: l.key.Name}}
		if l.store.Install(DefaultSnapshot(), stub) {
			log.Info("SLO ConfigMap not found, the default SLO configuration is in force")
		}
		return reconcile.Result{}, nil
	}
	log = log.WithValues("resourceVersion", cm.ResourceVersion)
	snap, unknown, err := ParseTolerant(cm)
	if err != nil {
		l.reject(log, cm, err)
		return reconcile.Result{}, nil
	}
	if unknown != nil && cm.ResourceVersion != l.lastWarned {
		l.lastWarned = cm.ResourceVersion
		log.Info("Applied the SLO ConfigMap without the fields Koord does not know", "unknownFields", unknown.Error())
		l.recorder.Eventf(cm, nil, corev1.EventTypeWarning, ReasonUnknownSLOConfigFields, actionLoad, "%s",
			truncateNote("Applied without these fields, which Koord does not know (a typo, or a Koordinator feature Koord lacks); "+
				"the webhook refuses them in new versions:\n"+unknown.Error(), maxEventNote))
	}
	l.metrics.configValid.Set(1)
	recovered := l.lastRejected != ""
	l.lastRejected = ""
	if l.store.Install(snap, cm) || recovered {
		log.Info("Loaded the SLO configuration")
	} else {
		log.V(4).Info("SLO ConfigMap changed, the configuration did not")
	}
	return reconcile.Result{}, nil
}

// reject reports a version that does not parse or validate, once per resourceVersion.
func (l *Loader) reject(log logr.Logger, cm *corev1.ConfigMap, err error) {
	l.metrics.configValid.Set(0)
	if cm.ResourceVersion == l.lastRejected {
		return
	}
	l.lastRejected = cm.ResourceVersion
	l.metrics.configRejected.Inc()
	inForce := "the defaults"
	switch {
	case !l.store.Synced():
		inForce = "none yet, the controllers wait for a valid version"
	case l.store.Get().ResourceVersion != "":
		inForce = "resourceVersion " + l.store.Get().ResourceVersion
	}
	log.Error(err, "Rejected the SLO ConfigMap, the last good configuration stays in force", "inForce", inForce)
	l.recorder.Eventf(cm, nil, corev1.EventTypeWarning, ReasonInvalidSLOConfig, actionLoad, "%s",
		truncateNote("The configuration was not applied, the last good one stays in force:\n"+err.Error(), maxEventNote))
}

// truncateNote shortens note to at most limit bytes, cutting at a line end where it can and saying how many lines
// were left out.
func truncateNote(note string, limit int) string {
	if len(note) <= limit {
		return note
	}
	total := strings.Count(note, "\n") + 1
	const suffixRoom = 64
	cut := note[:limit-suffixRoom]
	if i := strings.LastIndex(cut, "\n"); i > 0 {
		cut = cut[:i]
	} else {
		for len(cut) > 0 && !utf8.RuneStart(note[len(cut)]) {
			cut = cut[:len(cut)-1]
		}
	}
	if left := total - (strings.Count(cut, "\n") + 1); left > 0 {
		return fmt.Sprintf("%s\n... %d more lines, see the koord-manager log", cut, left)
	}
	return cut + "\n... truncated, see the koord-manager log"
}
