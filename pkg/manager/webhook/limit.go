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

package webhook

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var rejectedForLoad = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "koord_manager_webhook_overload_rejections_total",
	Help: "Admission requests answered with 429 because the in-flight limit was reached until the request's deadline.",
})

func init() {
	metrics.Registry.MustRegister(rejectedForLoad)
}

// LimitInFlight serves at most n requests of h at a time. A request waits for a slot until its context ends
// (the apiserver's timeout), then gets 429 Too Many Requests, which the apiserver handles by the hook's failure
// policy. n <= 0 means no limit.
func LimitInFlight(h http.Handler, n int) http.Handler {
	if n <= 0 {
		return h
	}
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		case <-r.Context().Done():
			rejectedForLoad.Inc()
			http.Error(w, "koord-manager webhook: too many requests in flight", http.StatusTooManyRequests)
		}
	})
}
