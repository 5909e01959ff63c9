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

package cluster

// SampleBEPodFile is the name, in the state directory, of a sample BE pod manifest.
const SampleBEPodFile = "be-pod.yaml"

// SampleBEPod is a best-effort pod for the local cluster: QoS class BE, priority class koord-batch, and
// kubernetes.io/batch-cpu and batch-memory instead of cpu and memory, so that koord-scheduler places it on a
// node's batch resources (koord-manager's webhook does that rewrite itself only for pods a
// ClusterColocationProfile matches). The simulated node agent models its usage from the sim.koord.dev/usage
// annotation.
const SampleBEPod = `# A best-effort (BE) pod that runs on the batch resources Koord reclaims from what other pods request but
# do not use. Create it with:  kubectl apply -f be-pod.yaml
# and see where it runs:  kubectl get pod be-demo -o wide
apiVersion: v1
kind: Pod
metadata:
  name: be-demo
  namespace: default
  labels:
    koordinator.sh/qosClass: BE
  annotations:
    # Usage seen by the simulated node agent: 1.5 cores, 2Gi.
    sim.koord.dev/usage: '{"cpu": {"type": "constant", "value": "1500m"}, "memory": {"type": "constant", "value": "2Gi"}}'
spec:
  schedulerName: koord-scheduler
  priorityClassName: koord-batch
  containers:
    - name: worker
      image: busybox
      command: ["sh", "-c", "while true; do :; done"]
      resources:
        # Batch CPU is in milli-cores: 2000 is 2 cores.
        requests:
          kubernetes.io/batch-cpu: "2000"
          kubernetes.io/batch-memory: 4Gi
        limits:
          kubernetes.io/batch-cpu: "2000"
          kubernetes.io/batch-memory: 4Gi
`
