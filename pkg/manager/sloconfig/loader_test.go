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
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/koord-dev/koord/apis/configuration"
)

// step changes the ConfigMap (nil data deletes it), reconciles, and states what follows.
type step struct {
	data        map[string]string
	delete      bool
	wantRV      string
	wantSynced  bool
	wantEvents  []string
	wantNotify  bool
	wantValid   float64
	wantRejects float64
}

const (
	validData   = `{"enable": true}`
	invalidData = `{"enable": true, "degradeTimeMinutes": 0}`
	invalidNote = "Warning InvalidSLOConfig The configuration was not applied, the last good one stays in force:\n" +
		"colocation-config.degradeTimeMinutes: Invalid value: 0: must be greater than or equal to 1"
)

func TestLoaderReconcile(t *testing.T) {
	colocation := func(s string) map[string]string { return map[string]string{configuration.ColocationConfigKey: s} }
	tests := map[string]struct {
		steps []step
	}{
		"missing ConfigMap: defaults in force and synced": {
			steps: []step{{delete: true, wantSynced: true, wantNotify: true, wantValid: 1}},
		},
		"valid version is installed": {
			steps: []step{{data: colocation(validData), wantRV: "1", wantSynced: true, wantNotify: true, wantValid: 1}},
		},
		"invalid version at start-up: nothing in force, consumers wait": {
			steps: []step{{data: colocation(invalidData), wantEvents: []string{invalidNote}, wantValid: 0, wantRejects: 1}},
		},
		"invalid edit keeps the last good version, reported once per version": {
			steps: []step{
				{data: colocation(validData), wantRV: "1", wantSynced: true, wantNotify: true, wantValid: 1},
				{data: colocation(invalidData), wantRV: "1", wantSynced: true, wantEvents: []string{invalidNote}, wantValid: 0, wantRejects: 1},
				{wantRV: "1", wantSynced: true, wantValid: 0},
				{data: colocation(`{"enable": false}`), wantRV: "3", wantSynced: true, wantNotify: true, wantValid: 1},
			},
		},
		"fields Koord does not know: applied without them, reported once per version": {
			steps: []step{
				{data: colocation(validData), wantRV: "1", wantSynced: true, wantNotify: true, wantValid: 1},
				{data: colocation(`{"enable": false, "nope": 1}`), wantRV: "2", wantSynced: true, wantNotify: true, wantValid: 1, wantEvents: []string{
					"Warning UnknownSLOConfigFields Applied without these fields, which Koord does not know (a typo, or a Koordinator " +
						"feature Koord lacks); the webhook refuses them in new versions:\n" + `colocation-config: unknown field "nope"`,
				}},
				{wantRV: "2", wantSynced: true, wantValid: 1},
				// Unknown fields beside an invalid value: rejected, both reported.
				{data: colocation(`{"nope": 1, "degradeTimeMinutes": 0}`), wantRV: "2", wantSynced: true, wantValid: 0, wantRejects: 1, wantEvents: []string{
					"Warning InvalidSLOConfig The configuration was not applied, the last good one stays in force:\n" +
						`colocation-config: unknown field "nope"` + "\n" +
						"colocation-config.degradeTimeMinutes: Invalid value: 0: must be greater than or equal to 1",
				}},
			},
		},
		"an edit that changes nothing parsed does not notify": {
			steps: []step{
				{data: colocation(validData), wantRV: "1", wantSynced: true, wantNotify: true, wantValid: 1},
				{data: colocation(" " + validData + "\n"), wantRV: "2", wantSynced: true, wantValid: 1},
			},
		},
		"deleting the ConfigMap falls back to the defaults": {
			steps: []step{
				{data: colocation(validData), wantRV: "1", wantSynced: true, wantNotify: true, wantValid: 1},
				{delete: true, wantRV: "", wantSynced: true, wantNotify: true, wantValid: 1},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().Build()
			store := NewStore()
			notify := store.Subscribe()
			recorder := events.NewFakeRecorder(10)
			m := NewMetrics()
			l := NewLoader(c, store, recorder, LoaderOptions{Metrics: m})
			for i, s := range tc.steps {
				rejectsBefore := testutil.ToFloat64(m.configRejected)
				if s.data != nil || s.delete {
					applyConfigMap(t, c, s.data, s.delete)
				}
				if _, err := l.Reconcile(t.Context(), reconcile.Request{}); err != nil {
					t.Fatalf("step %d: Reconcile() = %v", i, err)
				}
				if got := store.Get().ResourceVersion; got != s.wantRV {
					t.Errorf("step %d: resourceVersion in force = %q, want %q", i, got, s.wantRV)
				}
				if got := store.Synced(); got != s.wantSynced {
					t.Errorf("step %d: Synced() = %v, want %v", i, got, s.wantSynced)
				}
				if diff := cmp.Diff(s.wantEvents, drainEvents(recorder)); diff != "" {
					t.Errorf("step %d: events (-want,+got):\n%s", i, diff)
				}
				if got := len(pending(notify)) > 0; got != s.wantNotify {
					t.Errorf("step %d: notified = %v, want %v", i, got, s.wantNotify)
				}
				if got := testutil.ToFloat64(m.configValid); got != s.wantValid {
					t.Errorf("step %d: %s = %v, want %v", i, "koord_manager_slo_config_valid", got, s.wantValid)
				}
				if got := testutil.ToFloat64(m.configRejected) - rejectsBefore; got != s.wantRejects {
					t.Errorf("step %d: rejected_total grew by %v, want %v", i, got, s.wantRejects)
				}
			}
		})
	}
}

// applyConfigMap creates, updates or deletes the SLO ConfigMap in c.
func applyConfigMap(t *testing.T, c client.Client, data map[string]string, del bool) {
	t.Helper()
	ctx := t.Context()
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: configuration.ConfigNamespace, Name: configuration.SLOCtrlConfigMap}, cm)
	switch {
	case del:
		if err == nil {
			err = c.Delete(ctx, cm)
		} else {
			err = client.IgnoreNotFound(err)
		}
	case err != nil:
		err = c.Create(ctx, configMap("", data))
	default:
		cm.Data = data
		err = c.Update(ctx, cm)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func drainEvents(r *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-r.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestLoaderReadError(t *testing.T) {
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("apiserver away")
		},
	}).Build()
	store := NewStore()
	l := NewLoader(c, store, events.NewFakeRecorder(1), LoaderOptions{Namespace: "ns", Name: "cfg"})
	_, err := l.Reconcile(t.Context(), reconcile.Request{})
	if diff := cmp.Diff("reading ConfigMap ns/cfg: apiserver away", errString(err)); diff != "" {
		t.Errorf("Reconcile() error (-want,+got):\n%s", diff)
	}
	if store.Synced() {
		t.Errorf("store synced after a read error")
	}
}

func TestLoaderOptions(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg", ResourceVersion: "5"},
		Data: map[string]string{configuration.ColocationConfigKey: validData}}
	c := fake.NewClientBuilder().WithObjects(cm, configMap("", map[string]string{configuration.ColocationConfigKey: invalidData})).Build()
	store := NewStore()
	l := NewLoader(c, store, events.NewFakeRecorder(1), LoaderOptions{Namespace: "ns", Name: "cfg"})
	if _, err := l.Reconcile(t.Context(), reconcile.Request{}); err != nil {
		t.Fatal(err)
	}
	if got := store.Get().ResourceVersion; got != "5" {
		t.Errorf("loaded resourceVersion %q, want the ConfigMap ns/cfg at 5", got)
	}
}

func TestTruncateNote(t *testing.T) {
	long := strings.Repeat("x", 50)
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = long
	}
	tests := map[string]struct {
		note  string
		limit int
		want  string
	}{
		"short":             {note: "a\nb", limit: 100, want: "a\nb"},
		"cut at a line end": {note: strings.Join(lines, "\n"), limit: 200, want: long + "\n" + long + "\n... 38 more lines, see the koord-manager log"},
		"one long line, cut at a rune": {note: strings.Repeat("é", 100), limit: 100,
			want: strings.Repeat("é", 18) + "\n... truncated, see the koord-manager log"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := truncateNote(tc.note, tc.limit)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("truncateNote() (-want,+got):\n%s", diff)
			}
			if len(got) > tc.limit {
				t.Errorf("truncateNote() is %d bytes, more than %d", len(got), tc.limit)
			}
		})
	}
}

func TestMetricsExposition(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := NewMetrics().Register(reg); err != nil {
		t.Fatal(err)
	}
	const want = `
# HELP koord_manager_slo_config_valid 1 when the latest version of the slo-controller-config ConfigMap parsed, validated and is in force; 0 when it was rejected and the last good version stays in force.
# TYPE koord_manager_slo_config_valid gauge
koord_manager_slo_config_valid 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "koord_manager_slo_config_valid"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "koord_manager_slo_config_valid", "koord_manager_slo_config_rejected_total"); err != nil || n != 2 {
		t.Errorf("registered series = %d (%v), want 2", n, err)
	}
}
