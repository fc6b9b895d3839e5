package cluster

import "strings"

// Default layout of the keys, as the agent's configuration defaults them.
const (
	DefaultNodesPrefix = "/registry/nodes/"
	DefaultHostsPrefix = "/registry/hosts/"
)

// PodsPrefix is the default desired-pods prefix of node.
func PodsPrefix(node string) string { return DefaultHostsPrefix + node + "/pods/" }

// ObjectPrefixes are the prefixes of node's ConfigMaps, Secrets and
// PersistentVolumeClaims, beside its pods: /registry/hosts/<node>/configmaps/,
// .../secrets/ and .../persistentvolumeclaims/.
func ObjectPrefixes(node string) []string {
	return []string{ObjectPrefix(node, "ConfigMap"), ObjectPrefix(node, "Secret"), ObjectPrefix(node, "PersistentVolumeClaim")}
}

// ObjectPrefix is the prefix of node's objects of kind (ConfigMap, Secret,
// PersistentVolumeClaim); "" for another kind.
func ObjectPrefix(node, kind string) string {
	resource, ok := map[string]string{"ConfigMap": "configmaps", "Secret": "secrets", "PersistentVolumeClaim": "persistentvolumeclaims"}[kind]
	if !ok {
		return ""
	}
	return DefaultHostsPrefix + node + "/" + resource + "/"
}

// StatusPrefix is the default pod-status prefix of node.
func StatusPrefix(node string) string { return DefaultHostsPrefix + node + "/status/" }

// PodKey is the key of pod namespace/name under a pods or status prefix.
func PodKey(prefix, namespace, name string) string { return prefix + namespace + "/" + name }

// hostKey splits a key of the default layout,
// /registry/hosts/<node>/<kind>/<ns>/<name>, reporting false for others.
func hostKey(key string) (node, kind, namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(key, DefaultHostsPrefix)
	if !found {
		return "", "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 4 || parts[0] == "" || parts[2] == "" || parts[3] == "" {
		return "", "", "", "", false
	}
	return parts[0], parts[1], parts[2], parts[3], true
}
