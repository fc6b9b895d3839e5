package registry

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/berth-dev/berth/model"
)

// derivedUID is a stable UID, in UUID form, for an object berth serves
// without one of its own (the node, events, objects declared without
// metadata.uid): the same parts give the same UID in every berth.
func derivedUID(parts ...string) types.UID {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	h[6] = h[6]&0x0f | 0x50 // version 5 style
	h[8] = h[8]&0x3f | 0x80
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

// ObjectUID is the uid the API serves for o: its own, else the one derived
// from its kind and key (what a client reading it states back as a
// precondition).
func ObjectUID(o *model.Object) types.UID {
	var uid types.UID
	switch {
	case o.ConfigMap != nil:
		uid = o.ConfigMap.UID
	case o.Secret != nil:
		uid = o.Secret.UID
	case o.PVC != nil:
		uid = o.PVC.UID
	}
	if uid == "" {
		uid = derivedUID(o.Kind, o.Key)
	}
	return uid
}
