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

package explain

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/koord-dev/koord/apis/extension"
)

// GangExplanation is `koordctl explain gang`: a gang's spec, as its PodGroup or its pods' annotations give it,
// and where each member is.
type GangExplanation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// PodGroup tells whether a PodGroup defines the gang; otherwise its members' annotations do.
	PodGroup bool `json:"podGroup"`
	// MinMember is how many members must be schedulable before any binds; TotalMember how many there will be.
	MinMember   int `json:"minMember"`
	TotalMember int `json:"totalMember,omitempty"`
	// Mode is what a failed member does to the gang (Strict or NonStrict); WaitingTime how long members wait
	// in Permit for the rest; Groups the gangs that bind together with it.
	Mode        string   `json:"mode,omitempty"`
	WaitingTime string   `json:"waitingTime,omitempty"`
	Groups      []string `json:"groups,omitempty"`
	// Phase and Scheduled are the PodGroup's status, when there is one.
	Phase     string `json:"phase,omitempty"`
	Scheduled int32  `json:"scheduled,omitempty"`
	// Members counts the gang's pods that exist and have not finished; Bound those of them on a node;
	// TimedOut those koord-scheduler marked as timed out.
	Members  int `json:"members"`
	Bound    int `json:"bound"`
	TimedOut int `json:"timedOut,omitempty"`
	// Pods are the members.
	Pods []GangMember `json:"pods,omitempty"`
	// State words where the gang stands.
	State string `json:"state"`
	// Warnings are annotations that could not be read.
	Warnings []string `json:"warnings,omitempty"`
}

// GangMember is one pod of a gang.
type GangMember struct {
	Name  string `json:"name"`
	Phase string `json:"phase"`
	Node  string `json:"node,omitempty"`
	// Waiting is the PodScheduled condition's message while the pod waits.
	Waiting  string `json:"waiting,omitempty"`
	TimedOut bool   `json:"timedOut,omitempty"`
}

// Waiting is how many more member pods the gang needs before its members can be scheduled.
func (g *GangExplanation) Waiting() int {
	return max(0, g.MinMember-g.Members)
}

// Gang explains the gang namespace/name: a PodGroup of that name, or the pods whose gang annotations name it.
func (e *Explainer) Gang(ctx context.Context, namespace, name string) (*GangExplanation, error) {
	if ns, n, ok := strings.Cut(name, "/"); ok {
		namespace, name = ns, n
	}
	g := &GangExplanation{Namespace: namespace, Name: name}
	pg, err := e.Koord.SchedulingSigsV1alpha1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		g.PodGroup, g.MinMember, g.Phase, g.Scheduled = true, int(pg.Spec.MinMember), string(pg.Status.Phase), pg.Status.Scheduled
		if pg.Spec.ScheduleTimeoutSeconds != nil {
			g.WaitingTime = (time.Duration(*pg.Spec.ScheduleTimeoutSeconds) * time.Second).String()
		}
		readGangMeta(g, pg)
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get PodGroup %s/%s: %w", namespace, name, err)
	}
	pods, err := e.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods of namespace %s: %w", namespace, err)
	}
	var first *corev1.Pod
	for i := range pods.Items {
		pod := &pods.Items[i]
		if gn := extension.GetGangName(pod); gn != name && gn != namespace+"/"+name {
			continue
		}
		if first == nil {
			first = pod
		}
		m := GangMember{Name: pod.Name, Phase: string(pod.Status.Phase), Node: pod.Spec.NodeName, TimedOut: extension.IsGangTimeout(pod)}
		if pod.DeletionTimestamp != nil {
			m.Phase = "Terminating"
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				m.Waiting = c.Message
			}
		}
		active := pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
		if active {
			g.Members++
			if pod.Spec.NodeName != "" {
				g.Bound++
			}
		}
		if m.TimedOut {
			g.TimedOut++
		}
		g.Pods = append(g.Pods, m)
	}
	slices.SortFunc(g.Pods, func(a, b GangMember) int { return strings.Compare(a.Name, b.Name) })
	if !g.PodGroup {
		if first == nil {
			return nil, fmt.Errorf("gang %s/%s not found: no PodGroup and no pod names it", namespace, name)
		}
		if n, err := extension.GetGangMinNum(first); err != nil {
			g.Warnings = append(g.Warnings, err.Error())
		} else {
			g.MinMember = n
		}
		if d, err := extension.GetGangWaitingTime(first); err != nil {
			g.Warnings = append(g.Warnings, err.Error())
		} else if d > 0 {
			g.WaitingTime = d.String()
		}
		readGangMeta(g, first)
	}
	g.State = g.state()
	return g, nil
}

// readGangMeta reads the annotations a PodGroup and a gang's pods share.
func readGangMeta(g *GangExplanation, obj metav1.Object) {
	if n, err := extension.GetGangTotalNumber(obj); err != nil {
		g.Warnings = append(g.Warnings, err.Error())
	} else {
		g.TotalMember = n
	}
	if m, err := extension.GetGangMode(obj); err != nil {
		g.Warnings = append(g.Warnings, err.Error())
	} else {
		g.Mode = string(m)
	}
	if groups, err := extension.GetGangGroups(obj); err != nil {
		g.Warnings = append(g.Warnings, err.Error())
	} else {
		g.Groups = groups
	}
}

// state words where the gang stands.
func (g *GangExplanation) state() string {
	switch {
	case g.MinMember == 0:
		return "no min-available: the gang is not defined (a PodGroup or the gang.scheduling.koordinator.sh/min-available annotation)"
	case g.Members < g.MinMember:
		return fmt.Sprintf("waiting for members: %d of min %d exist; none is scheduled before min exist", g.Members, g.MinMember)
	case g.Bound >= g.MinMember:
		return fmt.Sprintf("scheduled: %d of %d members bound (min %d)", g.Bound, g.Members, g.MinMember)
	case g.TimedOut > 0:
		return fmt.Sprintf("timed out: %d members waited longer than the waiting time; the gang's cycle starts again", g.TimedOut)
	default:
		return fmt.Sprintf("scheduling: %d of min %d members bound; the others must fit at once (see their reasons)", g.Bound, g.MinMember)
	}
}

func (g *GangExplanation) printSummary(p *printer) {
	total := ""
	if g.TotalMember > 0 {
		total = strconv.Itoa(g.TotalMember)
	}
	source := "pod annotations"
	if g.PodGroup {
		source = "PodGroup"
	}
	p.fields("defined by", source, "state", g.State, "min member", strconv.Itoa(g.MinMember), "total member", total,
		"members", strconv.Itoa(g.Members), "bound", strconv.Itoa(g.Bound), "mode", g.Mode, "waiting time", g.WaitingTime,
		"podgroup phase", g.Phase, "gang groups", strings.Join(g.Groups, ", "))
}

func (g *GangExplanation) printTable(p *printer) {
	p.section(fmt.Sprintf("Gang %s/%s", g.Namespace, g.Name))
	g.printSummary(p)
	if len(g.Pods) > 0 {
		p.section("Members")
		rows := make([][]string, 0, len(g.Pods))
		for _, m := range g.Pods {
			waiting := m.Waiting
			if m.TimedOut {
				waiting = "timed out; " + waiting
			}
			rows = append(rows, []string{m.Name, m.Phase, dash(m.Node), waiting})
		}
		p.table([]string{"pod", "phase", "node", "waiting"}, rows)
	}
	if len(g.Warnings) > 0 {
		p.section("Warnings")
		p.bullets(g.Warnings)
	}
}
