package sources

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// PushError is a refused push. Code is its HTTP status: 400 (not one object
// of the kind, or not the named one), 403 (over the source's quota: Msg is
// the apiserver's "exceeded quota: ..." line), 404 (absent), 409 (exists,
// or changed since the base), 413 (larger than MaxPushBytes), 422 (did not
// validate: Errors), 500 (persisting).
type PushError struct {
	Code   int
	Msg    string
	Errors []manifest.ManifestError
}

func (e *PushError) Error() string { return e.Msg }

// HTTPStatus is the HTTP status of the refusal.
func (e *PushError) HTTPStatus() int { return e.Code }

// ManifestErrors are the validation errors of a 422 (nil otherwise).
func (e *PushError) ManifestErrors() []manifest.ManifestError { return e.Errors }

func pushErr(code int, format string, args ...any) error {
	return &PushError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// kindOf returns the pushKind of kind ("Pod", "ConfigMap", "Secret"),
// checking that ns and name can name one (they become a file name).
func kindOf(kind, ns, name string) (pushKind, error) {
	var problems []string
	for _, m := range validation.IsDNS1123Label(ns) {
		problems = append(problems, "namespace "+quote(ns)+": "+m)
	}
	for _, m := range validation.IsDNS1123Subdomain(name) {
		problems = append(problems, "name "+quote(name)+": "+m)
	}
	if len(problems) > 0 {
		return pushKind{}, pushErr(http.StatusBadRequest, "%s", strings.Join(problems, "\n"))
	}
	for _, k := range pushKinds {
		if k.kind == kind {
			return k, nil
		}
	}
	return pushKind{}, pushErr(http.StatusBadRequest, "push: kind %q is not pushed", kind)
}

// Manifest returns the persisted manifest of the kind's object ns/name, as
// Put stores it: the one object as decoded (canonical). A file stored
// otherwise (before Put stored one object per file: a List holding the
// object, YAML aliases) is returned the same way, decoded; one that no
// longer decodes under the source's options is returned as stored. A
// PushError 404 when there is none.
func (s *PushSource) Manifest(kind, ns, name string) ([]byte, error) {
	k, err := kindOf(kind, ns, name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current(k, ns, name)
}

// current is Manifest's answer; s.mu is held.
func (s *PushSource) current(k pushKind, ns, name string) ([]byte, error) {
	data, err := s.read(k, ns, name)
	if err != nil {
		return nil, err
	}
	return s.reencoded(k, ns, name, data)
}

// reencoded is data, the persisted manifest of ns/name, as Put would store
// it; data itself when it does not decode to the one object.
func (s *PushSource) reencoded(k pushKind, ns, name string, data []byte) ([]byte, error) {
	obj, declared, err := s.decodeOne(k, s.file(k, ns, name), ns, name, data)
	if err != nil {
		return data, nil
	}
	return canonical(obj, declared)
}

func (s *PushSource) read(k pushKind, ns, name string) ([]byte, error) {
	data, err := os.ReadFile(s.file(k, ns, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil, pushErr(http.StatusNotFound, "%s %s/%s not found", k.word, ns, name)
	}
	if err != nil {
		return nil, pushErr(http.StatusInternalServerError, "push: %v", err)
	}
	return data, nil
}

// canonical is the manifest persisted for obj, a decoded object: the YAML
// of its JSON, one object, as decoding it again gives it back (a Secret's
// stringData is in its data). A pod's UID is the one its manifest declared
// (declared, "" for none), from which decoding derives the same UID again;
// its status, berth's to report, is left out.
func canonical(obj runtime.Object, declared types.UID) ([]byte, error) {
	var out any
	switch o := obj.(type) {
	case *v1.Pod:
		m := o.ObjectMeta
		m.UID = declared
		out = struct {
			metav1.TypeMeta   `json:",inline"`
			metav1.ObjectMeta `json:"metadata"`
			Spec              v1.PodSpec `json:"spec"`
		}{metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, m, o.Spec}
	case *v1.ConfigMap:
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: model.KindConfigMap}
		out = &c
	case *v1.Secret:
		c := *o
		c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: model.KindSecret}
		out = &c
	case *v1.PersistentVolumeClaim:
		// Its status is berth's to report, as a pod's.
		out = struct {
			metav1.TypeMeta   `json:",inline"`
			metav1.ObjectMeta `json:"metadata"`
			Spec              v1.PersistentVolumeClaimSpec `json:"spec"`
		}{metav1.TypeMeta{APIVersion: "v1", Kind: model.KindPVC}, o.ObjectMeta, o.Spec}
	default:
		return nil, pushErr(http.StatusInternalServerError, "push: cannot persist a %T", obj)
	}
	j, err := json.Marshal(out)
	if err == nil {
		var data []byte
		if data, err = yaml.JSONToYAML(j); err == nil {
			return data, nil
		}
	}
	return nil, pushErr(http.StatusInternalServerError, "push: encoding %T: %v", obj, err)
}

// PutOptions are how a Put writes: Replace lets it replace an existing
// object (else a 409); Base, when set, must be the persisted manifest (as
// Manifest returns it; else 409, or 404 when absent), so a
// read-modify-write never overwrites a concurrent change; DryRun checks
// everything and persists nothing.
type PutOptions struct {
	Base    []byte
	Replace bool
	DryRun  bool
}

// PutResult is what a Put did: the decoded object (the defaulted *v1.Pod,
// *v1.ConfigMap or *v1.Secret), whether it was created, and, with an
// applier, admission's refusal of it ("" when admitted): a refused object
// stays persisted, and its last good version (if any) runs.
type PutResult struct {
	Object  runtime.Object
	Created bool
	Refusal string
}

// Put validates data as exactly the one object ns/name of kind under the
// source's options and persists it, as decoded (canonical): what is
// stored, charged to the quota and read back by Manifest is the object
// held, whatever form data had (a List holding it, YAML aliases). A write
// that grows the source's usage beyond its quota is a 403, dry runs
// included. With an applier (SetApplier) it returns once the store holds
// the write. Refusals are *PushError.
func (s *PushSource) Put(kind, ns, name string, data []byte, o PutOptions) (PutResult, error) {
	obj, created, refusal, err := s.write(kind, ns, name, data, o.Base, o.Replace, o.DryRun)
	return PutResult{Object: obj, Created: created, Refusal: refusal}, err
}

func (s *PushSource) write(kind, ns, name string, data, base []byte, replace, dryRun bool) (runtime.Object, bool, string, error) {
	k, err := kindOf(kind, ns, name)
	if err != nil {
		return nil, false, "", err
	}
	if len(data) > MaxPushBytes {
		return nil, false, "", pushErr(http.StatusRequestEntityTooLarge, "%s %s/%s: the manifest is larger than %d MiB", k.word, ns, name, MaxPushBytes>>20)
	}
	obj, declared, err := s.decodeOne(k, "/"+k.path+"/"+ns+"/"+name, ns, name, data)
	if err != nil {
		return nil, false, "", err
	}
	if data, err = canonical(obj, declared); err != nil {
		return nil, false, "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.load(); err != nil {
		return nil, false, "", pushErr(http.StatusInternalServerError, "%v", err)
	}
	cur, err := s.read(k, ns, name)
	exists := err == nil
	if pe, ok := err.(*PushError); ok && pe.Code != http.StatusNotFound {
		return nil, false, "", err
	}
	if base != nil && exists {
		if cur, err = s.reencoded(k, ns, name, cur); err != nil {
			return nil, false, "", err
		}
	}
	switch {
	case base != nil && !exists:
		return nil, false, "", err
	case base != nil && !bytes.Equal(cur, base):
		return nil, false, "", pushErr(http.StatusConflict, "%s %s/%s was changed meanwhile; retry", k.word, ns, name)
	case exists && !replace:
		return nil, false, "", pushErr(http.StatusConflict, "%s %s/%s already exists; use PUT to replace it", k.word, ns, name)
	}
	file := s.file(k, ns, name)
	if msg := s.opts.Quota.exceeded(s.name, s.files.used, s.growth(k, file, data)); msg != "" {
		return nil, false, "", quotaErr(msg)
	}
	if dryRun {
		return obj, !exists, "", nil
	}
	if err := writeFileAtomic(s.dir, file, data); err != nil {
		s.opts.logger().Error("cannot persist pushed "+k.word, "source", s.name, k.word, ns+"/"+name, "err", err)
		return nil, false, "", pushErr(http.StatusInternalServerError, "push: persisting %s: %v", k.word, err)
	}
	s.files.set(file, s.decodeFile(file, data))
	applied, err := s.applyLocked()
	if err != nil {
		return nil, false, "", pushErr(http.StatusInternalServerError, "push: applying %s %s/%s: %v", k.word, ns, name, err)
	}
	return obj, !exists, applied.Refused[k.ref(ns, name)], nil
}

// growth is what writing data, one object of kind k, to file adds to the
// source's usage (negative where it shrinks it); s.mu is held.
func (s *PushSource) growth(k pushKind, file string, data []byte) usage {
	add := usage{objects: 1, bytes: int64(len(data))}
	if k.kind == "Pod" {
		add = usage{pods: 1, bytes: int64(len(data))}
	}
	if old := s.files.get(file); old != nil {
		return add.add(old.usage().times(-1))
	}
	return add
}

// Delete removes the kind's object ns/name (a 404 PushError when absent);
// with dryRun it only checks that it exists.
func (s *PushSource) Delete(kind, ns, name string, dryRun bool) error {
	k, err := kindOf(kind, ns, name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	file := s.file(k, ns, name)
	if dryRun {
		_, err := s.read(k, ns, name)
		return err
	}
	err = os.Remove(file)
	if err == nil || errors.Is(err, os.ErrNotExist) {
		if s.files != nil {
			s.files.remove(file)
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return pushErr(http.StatusNotFound, "%s %s/%s not found", k.word, ns, name)
		}
		return pushErr(http.StatusInternalServerError, "push: %v", err)
	}
	syncDir(s.dir)
	if _, err := s.applyLocked(); err != nil {
		return pushErr(http.StatusInternalServerError, "push: applying the removal of %s %s/%s: %v", k.word, ns, name, err)
	}
	return nil
}

// decodeOne decodes data, which must declare exactly the one object ns/name
// of kind k, under the source's options; origin names it in errors. It
// returns the object and, for a pod, the UID its manifest declared.
func (s *PushSource) decodeOne(k pushKind, origin, ns, name string, data []byte) (runtime.Object, types.UID, error) {
	dec := manifest.DecodeAll(s.name, origin, data, s.opts.Options)
	if len(dec.Errors) > 0 {
		code := http.StatusUnprocessableEntity
		lines := make([]string, len(dec.Errors))
		for i, e := range dec.Errors {
			lines[i] = e.Error()
			if e.PodKey == "" {
				code = http.StatusBadRequest // not even a pod
			}
		}
		return nil, "", &PushError{Code: code, Msg: strings.Join(lines, "\n"), Errors: dec.Errors}
	}
	var objs []manifest.Object
	for _, o := range dec.Objects {
		if o.Kind == k.kind {
			objs = append(objs, o)
		}
	}
	n := len(dec.Pods) + len(dec.Objects)
	var key string
	var obj runtime.Object
	var declared types.UID
	switch {
	case k.kind == "Pod" && len(dec.Pods) == 1 && n == 1:
		key = manifest.PodKey(dec.Pods[0].Pod.Namespace, dec.Pods[0].Pod.Name)
		obj, declared = dec.Pods[0].Pod, dec.Pods[0].DeclaredUID
	case k.kind != "Pod" && len(objs) == 1 && n == 1:
		key = objs[0].Key()
		switch o := objs[0]; {
		case o.ConfigMap != nil:
			obj = o.ConfigMap
		case o.Secret != nil:
			obj = o.Secret
		default:
			obj = o.PVC
		}
	case n == 0:
		return nil, "", pushErr(http.StatusBadRequest, "%s: body declares no %s", origin, k.word)
	default:
		return nil, "", pushErr(http.StatusBadRequest, "%s: body declares %d objects, want exactly one %s", origin, n, k.word)
	}
	if key != ns+"/"+name {
		return nil, "", pushErr(http.StatusBadRequest, "%s: %s %s in the body does not match %s/%s in the URL", origin, k.word, key, ns, name)
	}
	return obj, declared, nil
}
