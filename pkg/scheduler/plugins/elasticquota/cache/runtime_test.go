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

package cache

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDistribute checks the runtime quotas of sibling quotas in one resource dimension against trees
// computed by hand; the arithmetic is in each case's comment.
func TestDistribute(t *testing.T) {
	lent := func(minV, request, maxV, weight int64) share {
		return share{min: minV, request: request, max: maxV, weight: weight, allowLent: true}
	}
	tests := map[string]struct {
		total    int64
		shares   []share
		scaleMin bool
		want     []int64
	}{
		// A requests 30 > min 10: gets 10 and borrows. B requests 5 <= min 10: gets 5 and lends the other 5.
		// Left: 40 - 10 - 5 = 25, all to A (the only borrower): 10 + 25 = 35 > request 30, so A is capped at 30
		// and 5 stays unused.
		"borrowing capped by request": {
			total:  40,
			shares: []share{lent(10, 30, 40, 40), lent(10, 5, 40, 40)},
			want:   []int64{30, 5},
		},
		// Same, A requesting 40: A gets 10 + 25 = 35, B 5.
		"borrowing the lent min": {
			total:  40,
			shares: []share{lent(10, 40, 40, 40), lent(10, 5, 40, 40)},
			want:   []int64{35, 5},
		},
		// B may not lend: it keeps min 10 though it requests 5. Left: 40 - 10 - 10 = 20 -> A 10 + 20 = 30.
		"lending off": {
			total:  40,
			shares: []share{lent(10, 40, 40, 40), {min: 10, request: 5, max: 40, weight: 40, allowLent: false}},
			want:   []int64{30, 10},
		},
		// Both borrow everything (min 0): 40 split 1:3 -> 10 and 30.
		"shared weights 1:3": {
			total:  40,
			shares: []share{lent(0, 40, 40, 1), lent(0, 40, 40, 3)},
			want:   []int64{10, 30},
		},
		// 1:3 of 40, but A requests only 5: first round A 10 (capped to 5, 5 surplus), B 30; second round B
		// alone gets the 5 -> 35.
		"water-filling past a capped borrower": {
			total:  40,
			shares: []share{lent(0, 5, 40, 1), lent(0, 40, 40, 3)},
			want:   []int64{5, 35},
		},
		// Min 20 + 40 = 60 > total 30: scaled by 30/60 to 10 and 20. Both request more than that: no spare.
		"min scaling": {
			total:    30,
			shares:   []share{lent(20, 20, 100, 1), lent(40, 50, 100, 1)},
			scaleMin: true,
			want:     []int64{10, 20},
		},
		// Without scaling both get their min, 20 + 40 = 60 > 30: the parent is over-committed.
		"min scaling off": {
			total:  30,
			shares: []share{lent(20, 20, 100, 1), lent(40, 50, 100, 1)},
			want:   []int64{20, 40},
		},
		// Guaranteed 15 > min 5: A starts at 15. Left 40 - 15 = 25 -> A 40 = its request.
		"guaranteed raises min": {
			total:  40,
			shares: []share{{min: 5, guaranteed: 15, request: 40, max: 40, weight: 1, allowLent: true}},
			want:   []int64{40},
		},
		// Request 100 is capped by max 15 before it gets here; the rest stays unused.
		"capped by max": {
			total:  40,
			shares: []share{lent(0, 15, 15, 1)},
			want:   []int64{15},
		},
		// 10 split 1:1:1 -> 3 each and 1 left, which goes to the first of equal remainders.
		"largest remainder": {
			total:  10,
			shares: []share{lent(0, 10, 10, 1), lent(0, 10, 10, 1), lent(0, 10, 10, 1)},
			want:   []int64{4, 3, 3},
		},
		// Weights near MaxInt64 (max of the built-in quotas) do not overflow: split 1:1.
		"huge weights": {
			total:  100,
			shares: []share{lent(0, 100, math.MaxInt64, math.MaxInt64), lent(0, 100, math.MaxInt64, math.MaxInt64)},
			want:   []int64{50, 50},
		},
		"nothing to share": {
			total:  0,
			shares: []share{lent(10, 5, 40, 1), lent(0, 40, 40, 1)},
			want:   []int64{5, 0},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			distribute(tc.total, tc.shares, tc.scaleMin)
			got := make([]int64, len(tc.shares))
			for i, s := range tc.shares {
				got[i] = s.runtime
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runtime (-want,+got):\n%s", diff)
			}
		})
	}
}
