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
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestLimitInFlight(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	m := NewMetrics()
	h := LimitInFlight(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	}), 2, m)

	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/x", nil))
		}()
	}
	<-entered
	<-entered

	// A third request finds no slot and gives up when its context ends.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", nil).WithContext(ctx))
	if rec.Code != http.StatusTooManyRequests {
		t.Errorf("third request got %d, want 429", rec.Code)
	}
	if got := testutil.ToFloat64(m.rejectedForLoad); got != 1 {
		t.Errorf("koord_manager_webhook_overload_rejections_total = %v, want 1", got)
	}
	select {
	case <-entered:
		t.Error("the third request reached the handler past the limit")
	default:
	}

	close(release)
	wg.Wait()
	// With the slots free again, a request goes through.
	rec = httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", nil))
		close(done)
	}()
	<-entered
	<-done
	if rec.Code != http.StatusOK {
		t.Errorf("request after release got %d, want 200", rec.Code)
	}
}
