package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Registry reads and writes the cluster's keys in the default layout for
// the CLI: nodes under /registry/nodes/, and per node desired pods and pod
// statuses under /registry/hosts/<node>/.
type Registry struct {
	Client *clientv3.Client
}

// Nodes lists the live nodes (those whose lease holds), by name.
func (r Registry) Nodes(ctx context.Context) ([]v1.Node, error) {
	resp, err := r.Client.Get(ctx, DefaultNodesPrefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd: listing %s: %w", DefaultNodesPrefix, err)
	}
	nodes := []v1.Node{}
	for _, kv := range resp.Kvs {
		var n v1.Node
		if err := json.Unmarshal(kv.Value, &n); err != nil {
			return nil, fmt.Errorf("etcd: %s: %w", kv.Key, err)
		}
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	return nodes, nil
}

// Pods lists every node's pods: each pod with a status key, with its
// desired manifest when the pod came from etcd, and each desired pod
// without a status as Pending on a live node, Unknown on another.
// spec.nodeName names the node. The listing is one read (one revision).
func (r Registry) Pods(ctx context.Context) ([]v1.Pod, error) {
	resp, err := r.Client.Txn(ctx).Then(
		clientv3.OpGet(DefaultHostsPrefix, clientv3.WithPrefix()),
		clientv3.OpGet(DefaultNodesPrefix, clientv3.WithPrefix(), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("etcd: listing %s: %w", DefaultHostsPrefix, err)
	}
	live := map[string]bool{}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		live[string(kv.Key)[len(DefaultNodesPrefix):]] = true
	}
	type entry struct {
		desired *v1.Pod
		status  *v1.PodStatus
	}
	byKey := map[[3]string]*entry{}
	get := func(k [3]string) *entry {
		if byKey[k] == nil {
			byKey[k] = &entry{}
		}
		return byKey[k]
	}
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		node, kind, ns, name, ok := hostKey(string(kv.Key))
		if !ok {
			continue
		}
		k := [3]string{node, ns, name}
		switch kind {
		case "pods":
			var p v1.Pod
			if json.Unmarshal(yamlToJSON(kv.Value), &p) == nil {
				get(k).desired = &p
			}
		case "status":
			var s v1.PodStatus
			if json.Unmarshal(kv.Value, &s) == nil {
				get(k).status = &s
			}
		}
	}
	pods := make([]v1.Pod, 0, len(byKey))
	for k, e := range byKey {
		var p v1.Pod
		if e.desired != nil {
			p = *e.desired
		}
		p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		p.Namespace, p.Name, p.Spec.NodeName = k[1], k[2], k[0]
		switch {
		case e.status != nil:
			p.Status = *e.status
			if e.status.StartTime != nil {
				p.CreationTimestamp = *e.status.StartTime
			}
		case live[k[0]]:
			p.Status = v1.PodStatus{Phase: v1.PodPending, Reason: "NoStatus", Message: "the node has not reported this pod yet"}
		default:
			p.Status = v1.PodStatus{Phase: v1.PodUnknown, Reason: "NodeLost", Message: "node " + k[0] + " is not registered (its lease expired or it never ran)"}
		}
		pods = append(pods, p)
	}
	sort.Slice(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if a.Spec.NodeName != b.Spec.NodeName {
			return a.Spec.NodeName < b.Spec.NodeName
		}
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return pods, nil
}

// Put writes the manifests by pod to node's desired-pods keys in one
// transaction.
func (r Registry) Put(ctx context.Context, node string, manifests map[[2]string][]byte) error {
	return r.PutKeys(ctx, node, podKeys(node, manifests))
}

func podKeys(node string, manifests map[[2]string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(manifests))
	for k, m := range manifests {
		out[PodKey(PodsPrefix(node), k[0], k[1])] = m
	}
	return out
}

// PutKeys writes values (by etcd key: pods and objects of node) in one
// transaction.
func (r Registry) PutKeys(ctx context.Context, node string, values map[string][]byte) error {
	ops := make([]clientv3.Op, 0, len(values))
	for k, m := range values {
		ops = append(ops, clientv3.OpPut(k, string(m)))
	}
	if _, err := r.Client.Txn(ctx).Then(ops...).Commit(); err != nil {
		return fmt.Errorf("etcd: writing pods of node %s: %w", node, err)
	}
	return nil
}

// Delete removes pod namespace/name from node's desired pods; it fails when
// there is no such key.
func (r Registry) Delete(ctx context.Context, node, namespace, name string) error {
	key := PodKey(PodsPrefix(node), namespace, name)
	resp, err := r.Client.Delete(ctx, key)
	if err != nil {
		return fmt.Errorf("etcd: deleting %s: %w", key, err)
	}
	if resp.Deleted == 0 {
		return fmt.Errorf("pod %s/%s not found on node %s (no key %s)", namespace, name, node, key)
	}
	return nil
}

// yamlToJSON converts a YAML manifest (JSON is YAML) for decoding; data it
// cannot convert is returned as is.
func yamlToJSON(b []byte) []byte {
	if j, err := yaml.YAMLToJSON(b); err == nil {
		return j
	}
	return b
}
