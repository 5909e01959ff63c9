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
	"cmp"
	"math"
	"slices"

	"github.com/koord-dev/koord/pkg/util/quantity"
)

// share is one child quota's part of its parent's resources in one resource dimension.
type share struct {
	// min, guaranteed, request and max are the child's; request is already capped by max.
	min, guaranteed, request, max int64
	// weight is the child's shared weight: how much of the spare resources it gets, relative to its siblings.
	weight int64
	// allowLent is false when the child keeps its min even when it requests less.
	allowLent bool
	// runtime is the result.
	runtime int64
}

// distribute splits total among the children, one resource dimension at a time:
//
//  1. with scaleMin, when the children's min add up to more than total, every min is scaled down by
//     total/Σmin (rounded down);
//  2. each child is guaranteed max(min, guaranteed): a child requesting no more gets its request (or, with
//     allowLent false, its min anyway); a child requesting more gets its min and borrows;
//  3. what is left of total goes to the borrowers in proportion to their weights, each capped at its
//     request, and what a capped borrower does not need goes round again (water-filling), with integer
//     shares rounded by largest remainder so that nothing is lost;
//  4. no runtime exceeds the child's max.
func distribute(total int64, shares []share, scaleMin bool) {
	if total < 0 {
		total = 0
	}
	if scaleMin {
		var sumMin int64
		for i := range shares {
			sumMin = quantity.Add(sumMin, max(shares[i].min, 0))
		}
		if sumMin > total {
			for i := range shares {
				shares[i].min = mulDiv(max(shares[i].min, 0), total, sumMin)
			}
		}
	}
	remaining := total
	var borrowers []int
	for i := range shares {
		s := &shares[i]
		guaranteed := max(s.min, s.guaranteed, 0)
		switch {
		case s.request > guaranteed:
			s.runtime = guaranteed
			borrowers = append(borrowers, i)
		case s.allowLent:
			s.runtime = max(s.request, 0)
		default:
			s.runtime = guaranteed
		}
		remaining = quantity.Sub(remaining, s.runtime)
	}
	for remaining > 0 && len(borrowers) > 0 {
		deltas := splitByWeight(remaining, shares, borrowers)
		remaining = 0
		next := borrowers[:0]
		for k, i := range borrowers {
			s := &shares[i]
			s.runtime = quantity.Add(s.runtime, deltas[k])
			if s.runtime >= s.request {
				// Capped at its request: what it does not need goes round again.
				remaining = quantity.Add(remaining, s.runtime-s.request)
				s.runtime = s.request
				continue
			}
			next = append(next, i)
		}
		borrowers = next
	}
	for i := range shares {
		shares[i].runtime = min(shares[i].runtime, max(shares[i].max, 0))
	}
}

// splitByWeight splits amount among the borrowers (indexes into shares) in proportion to their weights, by
// the largest remainder method: each gets floor(amount×w/W), and the units left go one each to the largest
// remainders, ties to the earlier borrower. Borrowers without weight get nothing; the result adds up to
// amount unless no borrower has weight.
func splitByWeight(amount int64, shares []share, borrowers []int) []int64 {
	deltas := make([]int64, len(borrowers))
	weights := make([]int64, len(borrowers))
	var sum int64
	for k, i := range borrowers {
		weights[k] = max(shares[i].weight, 0)
	}
	// Halve all weights until their sum fits an int64: proportions barely change, and the arithmetic stays
	// exact.
	for {
		sum = 0
		overflow := false
		for _, w := range weights {
			if sum > math.MaxInt64-w {
				overflow = true
				break
			}
			sum += w
		}
		if !overflow {
			break
		}
		for k := range weights {
			weights[k] /= 2
		}
	}
	if sum == 0 {
		return deltas
	}
	type remainder struct {
		k int
		r int64
	}
	remainders := make([]remainder, 0, len(borrowers))
	var given int64
	for k, w := range weights {
		if w == 0 {
			continue
		}
		deltas[k] = mulDiv(w, amount, sum)
		given += deltas[k]
		// The remainder of w×amount/sum, which is below sum and so fits an int64.
		remainders = append(remainders, remainder{k: k, r: mulMod(w, amount, sum)})
	}
	left := amount - given
	slices.SortStableFunc(remainders, func(a, b remainder) int { return cmp.Compare(b.r, a.r) })
	for _, r := range remainders {
		if left <= 0 {
			break
		}
		deltas[r.k]++
		left--
	}
	return deltas
}
