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
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCountAudit(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	lineWithCode := func(stage, verb, agent, resource, sub string, at time.Time, code int) string {
		return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"x","stage":%q,"requestURI":"/api/v1/x","verb":%q,`+
			`"user":{"username":"koord-admin"},"userAgent":%q,"objectRef":{"resource":%q,"subresource":%q,"name":"n1","apiVersion":"v1"},`+
			`"responseStatus":{"metadata":{},"code":%d},"requestReceivedTimestamp":%q,"stageTimestamp":%q}`,
			stage, verb, agent, resource, sub, code, at.Format(metav1.RFC3339Micro), at.Format(metav1.RFC3339Micro))
	}
	line := func(stage, verb, agent, resource, sub string, at time.Time) string {
		return lineWithCode(stage, verb, agent, resource, sub, at, 200)
	}
	log := strings.Join([]string{
		line("ResponseComplete", "update", "koord-sim/v0.0.0 (linux/amd64) kubernetes/$Format", "nodemetrics", "status", t0.Add(time.Second)),
		line("ResponseComplete", "update", "koord-sim/v0.0.0 (linux/amd64) kubernetes/$Format", "nodemetrics", "status", t0.Add(2*time.Second)),
		line("ResponseComplete", "patch", "koord-manager/v0.1.0 (linux/amd64) kubernetes/abc", "nodes", "status", t0.Add(3*time.Second)),
		lineWithCode("ResponseComplete", "patch", "koord-manager/v0.1.0 (linux/amd64) kubernetes/abc", "nodes", "status", t0.Add(4*time.Second), 409),
		line("ResponseComplete", "list", "kube-controller-manager/v1.37.0 (linux/amd64) kubernetes/abc/system:serviceaccount:kube-system:gc", "pods", "", t0.Add(time.Second)),
		// A watch's start is not a request of its own; the window is [from, to).
		line("ResponseStarted", "watch", "koord-scheduler/v0.1.0", "pods", "", t0.Add(time.Second)),
		line("ResponseComplete", "update", "koord-sim/v0.0.0", "nodemetrics", "status", t0.Add(-time.Second)),
		line("ResponseComplete", "update", "koord-sim/v0.0.0", "nodemetrics", "status", t0.Add(10*time.Second)),
		`{"kind":"Event","stage":"ResponseComp`, // cut by a restart
		`{"kind":"Event","stage":"ResponseComplete","verb":"get","requestURI":"/readyz","userAgent":"","requestReceivedTimestamp":"` + t0.Add(time.Second).Format(metav1.RFC3339Micro) + `"}`,
	}, "\n")
	counts, bad, err := countAudit(strings.NewReader(log), t0, t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if bad != 1 {
		t.Errorf("bad lines = %d, want 1", bad)
	}
	want := requestCounts{
		{agent: "koord-sim", verb: "update", resource: "nodemetrics/status"}:            2,
		{agent: "koord-manager", verb: "patch", resource: "nodes/status"}:               1,
		{agent: "koord-manager", verb: "patch", resource: "nodes/status", failed: true}: 1,
		{agent: "kube-controller-manager", verb: "list", resource: "pods"}:              1,
		{agent: "(none)", verb: "get", resource: "/readyz"}:                             1,
	}
	if diff := cmp.Diff(want, counts, cmp.AllowUnexported(requestKey{})); diff != "" {
		t.Errorf("counts (-want,+got):\n%s", diff)
	}
	if got := counts.succeeded("koord-sim", "nodemetrics/status", "update", "patch"); got != 2 {
		t.Errorf("sum = %d, want 2", got)
	}
	if got := counts.succeeded("", "nodes/status", "update"); got != 0 {
		t.Errorf("successful updates of nodes/status = %d, want 0 (the writes are patches)", got)
	}
	if got := counts.succeeded("koord-manager", "nodes/status", "patch"); got != 1 {
		t.Errorf("successful patches of nodes/status = %d, want 1 (the other failed)", got)
	}

	rates := counts.rates(2*time.Second, 1)
	var got []string
	for _, r := range rates {
		got = append(got, fmt.Sprintf("%s r%.1f w%.1f %d", r.agent, r.reads, r.writes, len(r.top)))
	}
	// The conflict counts as load; writers with equal rates come by name.
	wantRates := []string{"koord-manager r0.0 w1.0 1", "koord-sim r0.0 w1.0 1", "(none) r0.5 w0.0 0", "kube-controller-manager r0.5 w0.0 0"}
	if diff := cmp.Diff(wantRates, got); diff != "" {
		t.Errorf("rates, the busiest writer first (-want,+got):\n%s", diff)
	}
}

func TestMemorySummary(t *testing.T) {
	for name, tc := range map[string]struct {
		samples             []uint64
		wantFirst, wantPeak uint64
		wantLast            uint64
		wantGrowth          float64
	}{
		"none":               {},
		"too few":            {samples: []uint64{5, 9, 7}, wantFirst: 5, wantPeak: 9, wantLast: 7},
		"flat after warm-up": {samples: []uint64{10, 50, 100, 100, 101, 99, 100, 100}, wantFirst: 10, wantPeak: 101, wantLast: 100, wantGrowth: 1},
		"growing":            {samples: []uint64{10, 20, 100, 100, 150, 160, 200, 200}, wantFirst: 10, wantPeak: 200, wantLast: 200, wantGrowth: 2},
	} {
		t.Run(name, func(t *testing.T) {
			first, peak, last, growth := memorySeries{samples: tc.samples}.summary()
			if first != tc.wantFirst || peak != tc.wantPeak || last != tc.wantLast || growth != tc.wantGrowth {
				t.Errorf("summary() = %d, %d, %d, %v; want %d, %d, %d, %v", first, peak, last, growth, tc.wantFirst, tc.wantPeak, tc.wantLast, tc.wantGrowth)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, x := range n {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	sorted := ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{
		{p: 50, want: 5 * time.Millisecond},
		{p: 90, want: 9 * time.Millisecond},
		{p: 99, want: 10 * time.Millisecond},
		{p: 100, want: 10 * time.Millisecond},
		{p: 0, want: time.Millisecond},
	} {
		if got := percentile(sorted, tc.p); got != tc.want {
			t.Errorf("percentile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("percentile of nothing = %v, want 0", got)
	}
}
