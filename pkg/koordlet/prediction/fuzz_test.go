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

package prediction

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/koord-dev/koord/pkg/koordlet/metriccache"
)

// FuzzRestore: whatever a checkpoint file holds, restoring it neither panics nor leaves an invalid model: a
// restored model's percentiles are finite and within its buckets.
func FuzzRestore(f *testing.F) {
	f.Add([]byte(`{"UID":"x","CPU":{"referenceTimestamp":"2026-03-02T00:00:00Z","bucketWeights":{"22":10000},"totalWeight":5},` +
		`"Memory":{"referenceTimestamp":"2026-03-02T00:00:00Z","bucketWeights":{"62":10000},"totalWeight":5},"LastUpdated":"2026-03-02T00:00:00Z"}`))
	f.Add([]byte(`{"CPU":{"exactBucketWeights":{"3":1.5,"157":0.25},"referenceTimestamp":"2026-03-02T00:00:00Z"},"Memory":{}}`))
	f.Add([]byte(`{"CPU":{"bucketWeights":{"-4":1}},"Memory":{"totalWeight":-1}}`))
	f.Add([]byte(`{"CPU":{"exactBucketWeights":{"3":1e308,"4":1e308},"referenceTimestamp":"2026-03-02T00:00:00Z"},"Memory":{}}`))
	f.Add([]byte("{not json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, NodeItemUID(SystemItem)), data, 0o600); err != nil {
			t.Fatal(err)
		}
		in := &fakeInputs{node: testNode()}
		s := NewServer(DefaultConfig(), metriccache.New(metriccache.Options{}), in, WithStore(NewStore(dir)))
		s.Restore(testContext(t))
		m := s.models[NodeItemUID(SystemItem)]
		if m == nil {
			return
		}
		for _, h := range []*Histogram{m.cpu, m.memory} {
			for _, p := range []float64{0, 0.5, 0.95, 0.98, 1} {
				v := h.Percentile(p)
				if v < 0 || v > h.buckets.Start(h.buckets.Len()-1) || v != v {
					t.Fatalf("p%v = %v", p*100, v)
				}
			}
		}
	})
}
