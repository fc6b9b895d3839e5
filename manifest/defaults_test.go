package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/validation"
)

// A network source never lets a manifest choose a pod's UID: a pushed pod
// naming a file-source pod's UID gets its own, and two sources never share
// one (so never a pod directory).
func TestNetworkSourcesDeriveUIDs(t *testing.T) {
	const fileUID = "0b7e5a3c-1111-4222-8333-944445555666"
	m := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: web, uid: %s}\nspec:\n  containers: [{name: c, image: busybox}]\n", fileUID)
	file := decodeOK(t, m, Options{Level: model.LevelPrivileged, Node: "n1"})
	if len(file) != 1 || file[0].Pod.UID != fileUID {
		t.Fatalf("file source: %v", file)
	}
	pushA, errs := Decode("push", "o", []byte(m), Options{DeriveUIDs: true, Node: "n1"})
	pushB, _ := Decode("http", "o", []byte(m), Options{DeriveUIDs: true, Node: "n1"})
	if len(errs) != 0 || len(pushA) != 1 || len(pushB) != 1 {
		t.Fatalf("network decode: %v %v", pushA, errs)
	}
	a, b := pushA[0].Pod.UID, pushB[0].Pod.UID
	if a == fileUID || b == fileUID || a == b {
		t.Errorf("uids file %s push %s http %s: a network pod took another's", fileUID, a, b)
	}
	if len(validation.UID(a, nil)) != 0 {
		t.Errorf("derived uid %q is not one path element", a)
	}
	// Stable across decodes, and a new declared UID is a new incarnation.
	again, _ := Decode("push", "o", []byte(m), Options{DeriveUIDs: true, Node: "n1"})
	other, _ := Decode("push", "o", []byte(strings.Replace(m, fileUID, "another-uid", 1)), Options{DeriveUIDs: true, Node: "n1"})
	if again[0].Pod.UID != a || other[0].Pod.UID == a {
		t.Errorf("derived uids: again %s, other %s, first %s", again[0].Pod.UID, other[0].Pod.UID, a)
	}
	// Without a declared UID, the derived one is PodUID of the scope and key.
	plain, _ := Decode("push", "o", []byte(strings.Replace(m, ", uid: "+fileUID, "", 1)), Options{DeriveUIDs: true, Node: "n1"})
	if want := PodUID(uidScope("n1", "push"), "default", "web"); plain[0].Pod.UID != want {
		t.Errorf("undeclared uid %s, want %s", plain[0].Pod.UID, want)
	}
	// A hostile declared UID is still refused by name, not silently replaced.
	bad := strings.Replace(m, fileUID, "x/../../etc", 1)
	if errs := decodeErrs(t, bad, Options{DeriveUIDs: true}); len(errs) != 1 || !strings.Contains(errs[0], "metadata.uid: Invalid value") {
		t.Errorf("hostile uid: %q", errs)
	}
	// The legacy format's uuid takes the same check.
	legacy := "version: v1beta1\nid: seed\nuuid: ../../../tmp\ncontainers: [{name: c, image: busybox}]\n"
	if errs := decodeErrs(t, legacy, Options{Level: model.LevelPrivileged}); len(errs) != 1 || !strings.Contains(errs[0], "default/seed: uuid: Invalid value") {
		t.Errorf("legacy uuid: %q", errs)
	}
}
