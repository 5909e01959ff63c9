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
)

// LimitInFlight serves at most n requests of h at a time. A request waits for a slot until its context ends
// (the apiserver's timeout), then gets 429 Too Many Requests, which the apiserver handles by the hook's failure
// policy, and counts in m. n <= 0 means no limit.
func LimitInFlight(h http.Handler, n int, m *Metrics) http.Handler {
	if n <= 0 {
		return h
	}
	m = m.orNew()
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
			h.ServeHTTP(w, r)
		case <-r.Context().Done():
			m.rejectedForLoad.Inc()
			http.Error(w, "koord-manager webhook: too many requests in flight", http.StatusTooManyRequests)
		}
	})
}
