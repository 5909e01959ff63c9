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

package sim

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AnnotationUsage is the pod annotation that declares the simulated usage of a pod, a JSON object with an
// optional profile per resource:
//
//	{"cpu": {"type": "diurnal", "base": "1", "amplitude": "800m", "period": "24h", "peak": "14h"},
//	 "memory": {"type": "constant", "value": "2Gi"}}
//
// It is read by the simulated node agents only; it is not Koordinator API.
const AnnotationUsage = "sim.koord.dev/usage"

// ProfileType names the shape of a usage profile.
type ProfileType string

// Profile types.
const (
	// ProfileConstant is a constant usage: field value.
	ProfileConstant ProfileType = "constant"
	// ProfileDiurnal is a sine wave: base + amplitude × cos(2π (t − peak) / period), floored at zero; fields
	// base, amplitude, period (default 24h) and peak (default 0s).
	ProfileDiurnal ProfileType = "diurnal"
	// ProfileBursty is base usage with bursts: time is cut into buckets of duration (default 1m), and in each
	// bucket the usage is burst with the given probability, else base; fields base, burst, probability and
	// duration.
	ProfileBursty ProfileType = "bursty"
)

// Defaults of the optional profile fields.
const (
	// DefaultPeriod is the period of a diurnal profile that sets none.
	DefaultPeriod = 24 * time.Hour
	// DefaultBurstDuration is the bucket length of a bursty profile that sets none.
	DefaultBurstDuration = time.Minute
)

// Profile is the usage of one resource of one pod over time. CPU values are in cores, memory values in bytes.
// ParseUsage returns only valid profiles; At never returns a negative value.
type Profile struct {
	// Type is the shape.
	Type ProfileType
	// Value is the usage of a constant profile.
	Value float64
	// Base is the mean of a diurnal profile, or the usage of a bursty profile outside its bursts.
	Base float64
	// Amplitude is how far a diurnal profile swings above and below Base.
	Amplitude float64
	// Period is the length of one cycle of a diurnal profile.
	Period time.Duration
	// Peak is the offset within the period at which a diurnal profile is highest, counted from the Unix epoch:
	// with a 24h period it is the time of day, in UTC, of the maximum.
	Peak time.Duration
	// Burst is the usage of a bursty profile during a burst.
	Burst float64
	// Probability is the chance, in [0, 1], that a bucket of a bursty profile is a burst.
	Probability float64
	// Duration is the bucket length of a bursty profile.
	Duration time.Duration
}

// Constant returns a constant profile of value v.
func Constant(v float64) Profile {
	return Profile{Type: ProfileConstant, Value: v}
}

// At returns the usage at time t. seed makes bursty profiles differ between pods and resources (see Seed); the
// same seed, profile and bucket always give the same value, so every reader of the model agrees.
func (p Profile) At(t time.Time, seed uint64) float64 {
	return p.at(t.UnixNano(), seed)
}

// at is At on Unix nanoseconds.
func (p Profile) at(ns int64, seed uint64) float64 {
	switch p.Type {
	case ProfileDiurnal:
		period := int64(p.Period)
		phase := floorMod(ns-int64(p.Peak), period)
		return max(p.Base+p.Amplitude*math.Cos(2*math.Pi*float64(phase)/float64(period)), 0)
	case ProfileBursty:
		bucket := floorDiv(ns, int64(p.Duration))
		if unitFloat(mix(seed^mix(uint64(bucket)))) < p.Probability {
			return p.Burst
		}
		return p.Base
	}
	return p.Value
}

// Max returns the highest value the profile takes.
func (p Profile) Max() float64 {
	switch p.Type {
	case ProfileDiurnal:
		return max(p.Base+p.Amplitude, 0)
	case ProfileBursty:
		if p.Probability > 0 {
			return max(p.Burst, p.Base)
		}
		return p.Base
	}
	return p.Value
}

// Seed returns the seed of the bursts of resource r of the pod with uid: a hash of both, the same in every
// process.
func Seed(uid types.UID, r corev1.ResourceName) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(r))
	return h.Sum64()
}

// mix is the SplitMix64 finalizer: a bijection that spreads every input bit over the output.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// unitFloat maps x to [0, 1) using its top 53 bits.
func unitFloat(x uint64) float64 {
	return float64(x>>11) / (1 << 53)
}

// floorDiv returns ⌊a / b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// floorMod returns a mod b in [0, b) for b > 0.
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// Usage is the parsed AnnotationUsage: a profile per resource, nil where the annotation sets none (the pod's
// default applies there).
type Usage struct {
	// CPU is the CPU profile, in cores.
	CPU *Profile
	// Memory is the memory profile, in bytes.
	Memory *Profile
}

// profileFields are the fields each profile type accepts, besides "type", and whether each is required.
var profileFields = map[ProfileType]map[string]bool{
	ProfileConstant: {"value": true},
	ProfileDiurnal:  {"base": true, "amplitude": true, "period": false, "peak": false},
	ProfileBursty:   {"base": true, "burst": true, "probability": true, "duration": false},
}

// ParseUsage parses and validates the value of AnnotationUsage. The error names every field that is wrong, by
// its path in the JSON object (e.g. "cpu.amplitude"); a value with any error is rejected as a whole.
func ParseUsage(value string) (*Usage, error) {
	var top map[string]json.RawMessage
	if err := strictUnmarshal(value, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object of profiles per resource: %w", err)
	}
	if top == nil {
		return nil, fmt.Errorf("not a JSON object of profiles per resource: %s", strings.TrimSpace(value))
	}
	u := &Usage{}
	var errs field.ErrorList
	for _, key := range slices.Sorted(maps.Keys(top)) {
		path := field.NewPath(key)
		var dst **Profile
		switch corev1.ResourceName(key) {
		case corev1.ResourceCPU:
			dst = &u.CPU
		case corev1.ResourceMemory:
			dst = &u.Memory
		default:
			errs = append(errs, field.NotSupported(path, key, resourceNames))
			continue
		}
		p, perrs := parseProfile(path, top[key])
		errs = append(errs, perrs...)
		if len(perrs) == 0 {
			*dst = p
		}
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return u, nil
}

// resourceNames are the resources a usage annotation may set.
var resourceNames = []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory)}

// profileTypes are the profile types, in the order errors list them.
var profileTypes = []string{string(ProfileConstant), string(ProfileDiurnal), string(ProfileBursty)}

// parseProfile parses one resource's profile object: quantities are cores for CPU, bytes for memory.
func parseProfile(path *field.Path, raw json.RawMessage) (*Profile, field.ErrorList) {
	var obj map[string]json.RawMessage
	if err := strictUnmarshal(string(raw), &obj); err != nil || obj == nil {
		return nil, field.ErrorList{field.Invalid(path, string(raw), "must be a JSON object with a type")}
	}
	var errs field.ErrorList
	var typ string
	rawType, ok := obj["type"]
	if !ok {
		return nil, field.ErrorList{field.Required(path.Child("type"), "one of "+quotedList(profileTypes))}
	}
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return nil, field.ErrorList{field.Invalid(path.Child("type"), string(rawType), "must be a string")}
	}
	p := &Profile{Type: ProfileType(typ)}
	fields, ok := profileFields[p.Type]
	if !ok {
		return nil, field.ErrorList{field.NotSupported(path.Child("type"), typ, profileTypes)}
	}
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if _, known := fields[name]; !known && name != "type" {
			errs = append(errs, field.Forbidden(path.Child(name), fmt.Sprintf("not a field of a %s profile", typ)))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if _, set := obj[name]; fields[name] && !set {
			errs = append(errs, field.Required(path.Child(name), ""))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	get := func(name string, set func(*field.Path, json.RawMessage) *field.Error) {
		if raw, ok := obj[name]; ok {
			if err := set(path.Child(name), raw); err != nil {
				errs = append(errs, err)
			}
		}
	}
	quantityInto := func(dst *float64) func(*field.Path, json.RawMessage) *field.Error {
		return func(fp *field.Path, raw json.RawMessage) *field.Error {
			s, err := quantityText(fp, raw)
			if err != nil {
				return err
			}
			v, err := parseQuantity(fp, s)
			*dst = v
			return err
		}
	}
	durationInto := func(dst *time.Duration) func(*field.Path, json.RawMessage) *field.Error {
		return func(fp *field.Path, raw json.RawMessage) *field.Error {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return field.Invalid(fp, string(raw), `must be a duration string such as "5m" or "24h"`)
			}
			d, err := time.ParseDuration(s)
			if err != nil {
				return field.Invalid(fp, s, `must be a duration such as "5m" or "24h"`)
			}
			*dst = d
			return nil
		}
	}

	switch p.Type {
	case ProfileConstant:
		get("value", quantityInto(&p.Value))
	case ProfileDiurnal:
		p.Period = DefaultPeriod
		get("base", quantityInto(&p.Base))
		get("amplitude", quantityInto(&p.Amplitude))
		get("period", durationInto(&p.Period))
		get("peak", durationInto(&p.Peak))
		if len(errs) == 0 {
			if p.Period <= 0 {
				errs = append(errs, field.Invalid(path.Child("period"), p.Period.String(), "must be positive"))
			} else if p.Peak < 0 || p.Peak >= p.Period {
				errs = append(errs, field.Invalid(path.Child("peak"), p.Peak.String(),
					fmt.Sprintf("must be at least 0s and less than the period %s", p.Period)))
			}
		}
	case ProfileBursty:
		p.Duration = DefaultBurstDuration
		get("base", quantityInto(&p.Base))
		get("burst", quantityInto(&p.Burst))
		get("probability", func(fp *field.Path, raw json.RawMessage) *field.Error {
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return field.Invalid(fp, string(raw), "must be a number from 0 to 1")
			}
			if !(v >= 0 && v <= 1) {
				return field.Invalid(fp, v, "must be a number from 0 to 1")
			}
			p.Probability = v
			return nil
		})
		get("duration", durationInto(&p.Duration))
		if len(errs) == 0 {
			if p.Duration <= 0 {
				errs = append(errs, field.Invalid(path.Child("duration"), p.Duration.String(), "must be positive"))
			}
			if p.Burst < p.Base {
				errs = append(errs, field.Invalid(path.Child("burst"), rawText(obj["burst"]),
					fmt.Sprintf("must be at least base (%s)", rawText(obj["base"]))))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// quantityText returns the text of a quantity given as a JSON string ("500m") or number (0.5).
func quantityText(fp *field.Path, raw json.RawMessage) (string, *field.Error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", field.Invalid(fp, string(raw), `must be a quantity such as "500m", "2" or "1Gi"`)
}

// maxQuantity bounds every quantity of a profile, so that sums of usage stay finite.
const maxQuantity = 1e18

// parseQuantity parses a quantity from 0 to maxQuantity: cores for CPU, bytes for memory.
func parseQuantity(fp *field.Path, s string) (float64, *field.Error) {
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, field.Invalid(fp, s, `must be a quantity such as "500m", "2" or "1Gi"`)
	}
	switch v := q.AsApproximateFloat64(); {
	case v < 0:
		return 0, field.Invalid(fp, s, "must not be negative")
	case !(v <= maxQuantity):
		return 0, field.Invalid(fp, s, "must be at most 1e18")
	default:
		return v, nil
	}
}

// quotedList returns the quoted items separated by commas: "a", "b".
func quotedList(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = strconv.Quote(it)
	}
	return strings.Join(quoted, ", ")
}

// rawText returns a JSON string's content, or the raw JSON of any other value.
func rawText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

// strictUnmarshal decodes one JSON value and rejects trailing data.
func strictUnmarshal(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if err := dec.Decode(new(json.RawMessage)); !errors.Is(err, io.EOF) {
		return errors.New("data after the JSON value")
	}
	return nil
}
