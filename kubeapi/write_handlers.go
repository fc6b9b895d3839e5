package kubeapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/berth-dev/berth/kubeapi/registry"
	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

// patchRetries bounds the read-patch-write rounds of one PATCH that lose
// to a concurrent write.
const patchRetries = 5

func orError(f func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		if err := f(rw, r); err != nil {
			WriteError(rw, err)
		}
	}
}

// dryRun reads the dryRun parameter: "All" or absent, as in the apiserver.
func dryRun(r *http.Request) (bool, error) {
	vals := r.URL.Query()["dryRun"]
	for _, v := range vals {
		if v != "All" {
			return false, badRequest(fmt.Sprintf("unsupported dryRun value %q: only All is supported", v))
		}
	}
	return len(vals) > 0, nil
}

// params are the dryRun and fieldValidation parameters of a write.
func params(r *http.Request) (dry bool, mode string, err error) {
	if dry, err = dryRun(r); err != nil {
		return false, "", err
	}
	mode, err = fieldValidation(r)
	return dry, mode, err
}

func (w *writer) create(k writeKind) http.HandlerFunc {
	return orError(func(rw http.ResponseWriter, r *http.Request) error {
		dry, mode, err := params(r)
		if err != nil {
			return err
		}
		ns := r.PathValue("ns")
		j, err := readBody(r, k, "")
		if err != nil {
			return err
		}
		m, err := objectMap(k, "", j)
		if err != nil {
			return err
		}
		name, _, err := normalize(m, k, ns, "")
		if err != nil {
			return err
		}
		if err := checkFields(rw, mode, k, j, m); err != nil {
			return err
		}
		w.dropServedVolumeName(k, ns, name, m)
		if s, err := w.lookup(k, ns, name); err != nil {
			return err
		} else if s != nil && s.source != w.p.Name() {
			return w.alreadyExists(r, k, name, s)
		}
		data, err := manifestOf(m)
		if err != nil {
			return err
		}
		res, err := w.p.Put(k.kind, ns, name, data, sources.PutOptions{DryRun: dry})
		if err != nil {
			return pushStatus(k, name, err)
		}
		w.answer(rw, r, k, ns, name, res, dry, http.StatusCreated)
		return nil
	})
}

func (w *writer) replace(k writeKind) http.HandlerFunc {
	return orError(func(rw http.ResponseWriter, r *http.Request) error {
		dry, mode, err := params(r)
		if err != nil {
			return err
		}
		ns, name := r.PathValue("ns"), r.PathValue("name")
		s, err := w.owned(r, k, ns, name)
		if err != nil {
			return err
		}
		cur, err := w.p.Manifest(k.kind, ns, name)
		if err != nil {
			return pushStatus(k, name, err)
		}
		j, err := readBody(r, k, name)
		if err != nil {
			return err
		}
		data, err := w.replacement(rw, r, k, ns, name, s, cur, j, mode, nil)
		if err != nil {
			return err
		}
		res, err := w.p.Put(k.kind, ns, name, data, sources.PutOptions{Base: cur, Replace: true, DryRun: dry})
		if err != nil {
			return pushStatus(k, name, err)
		}
		w.answer(rw, r, k, ns, name, res, dry, http.StatusOK)
		return nil
	})
}

func (w *writer) patch(k writeKind) http.HandlerFunc {
	return orError(func(rw http.ResponseWriter, r *http.Request) error {
		dry, mode, err := params(r)
		if err != nil {
			return err
		}
		ns, name := r.PathValue("ns"), r.PathValue("name")
		typ, patch, err := readPatch(r)
		if err != nil {
			return err
		}
		s, err := w.owned(r, k, ns, name)
		if err != nil {
			return err
		}
		for range patchRetries {
			cur, err := w.p.Manifest(k.kind, ns, name)
			if err != nil {
				return pushStatus(k, name, err)
			}
			curJSON, err := objectJSON(k, ns, name, cur)
			if err != nil {
				return err
			}
			out, err := w.applyPatch(r.Context(), k, name, typ, curJSON, patch)
			if err != nil {
				return err
			}
			data, err := w.replacement(rw, r, k, ns, name, s, cur, out, mode, func(pre precond) precond { return patchPrecond(curJSON, pre) })
			if err != nil {
				return err
			}
			res, err := w.p.Put(k.kind, ns, name, data, sources.PutOptions{Base: cur, Replace: true, DryRun: dry})
			if isRace(err) {
				continue
			}
			if err != nil {
				return pushStatus(k, name, err)
			}
			w.answer(rw, r, k, ns, name, res, dry, http.StatusOK)
			return nil
		}
		return conflict(k, name, "the object kept changing while being patched; please retry")
	})
}

// objectJSON is the JSON a patch of the kind's object ns/name applies to:
// cur, its persisted manifest, which the push source gives as the one
// object decoded (what GET serves before withholding a Secret's values).
// Anything else, which a patch could reach around what GET withholds (a
// List's /items/0/stringData), is a 409 asking for a replace.
func objectJSON(k writeKind, ns, name string, cur []byte) ([]byte, error) {
	j, err := manifest.YAMLToJSON(cur, false)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("the persisted manifest of %s/%s: %w", ns, name, err))
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.Unmarshal(j, &head) != nil || head.Kind != k.kind || head.APIVersion != "v1" || head.Metadata.Name != name {
		return nil, conflict(k, name, fmt.Sprintf("its persisted manifest is not the one %s (a List holding it, or one that no longer decodes): replace it (PUT) before patching it", k.kind))
	}
	return j, nil
}

// replacement checks j, the whole new JSON of ns/name, against cur (its
// persisted manifest): the preconditions it states (passed through adjust
// when set), its fields by mode, and the UID it keeps; it returns the
// manifest to put over cur.
func (w *writer) replacement(rw http.ResponseWriter, r *http.Request, k writeKind, ns, name string, s *stored, cur, j []byte, mode string, adjust func(precond) precond) ([]byte, error) {
	m, err := objectMap(k, name, j)
	if err != nil {
		return nil, err
	}
	_, pre, err := normalize(m, k, ns, name)
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		pre = adjust(pre)
	}
	if err := w.preconditions(r, k, ns, name, s, pre); err != nil {
		return nil, err
	}
	if err := checkFields(rw, mode, k, j, m); err != nil {
		return nil, err
	}
	w.dropServedVolumeName(k, ns, name, m)
	keepUID(m, cur)
	return manifestOf(m)
}

func (w *writer) remove(k writeKind) http.HandlerFunc {
	return orError(func(rw http.ResponseWriter, r *http.Request) error {
		dry, err := dryRun(r)
		if err != nil {
			return err
		}
		ns, name := r.PathValue("ns"), r.PathValue("name")
		opts, err := deleteOptions(r, k, name)
		if err != nil {
			return err
		}
		for _, v := range opts.DryRun {
			if v != "All" {
				return badRequest(fmt.Sprintf("unsupported dryRun value %q: only All is supported", v))
			}
			dry = true
		}
		s, err := w.owned(r, k, ns, name)
		if err != nil {
			return err
		}
		if _, err := w.p.Manifest(k.kind, ns, name); err != nil {
			return pushStatus(k, name, err)
		}
		var pre precond
		if p := opts.Preconditions; p != nil {
			if p.UID != nil {
				pre.uid = string(*p.UID)
			}
			if p.ResourceVersion != nil {
				pre.resourceVersion = *p.ResourceVersion
			}
		}
		if err := w.preconditions(r, k, ns, name, s, pre); err != nil {
			return err
		}
		last := w.served(r, k, ns, name)
		if err := w.p.Delete(k.kind, ns, name, dry); err != nil {
			return pushStatus(k, name, err)
		}
		if opts.GracePeriodSeconds != nil && k.kind == "Pod" {
			rw.Header().Add("Warning", quoteWarning(fmt.Sprintf(
				"gracePeriodSeconds=%d is not honoured: berth stops the pod with its terminationGracePeriodSeconds", *opts.GracePeriodSeconds)))
		}
		if p, ok := last.(*v1.Pod); ok {
			p = p.DeepCopy()
			now := metav1.NewTime(w.a.o.Clock.Now()).Rfc3339Copy()
			p.DeletionTimestamp = &now
			p.DeletionGracePeriodSeconds = p.Spec.TerminationGracePeriodSeconds
			writeObject(rw, http.StatusOK, p)
			return nil
		}
		st := metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusSuccess,
			Details: &metav1.StatusDetails{Name: name, Kind: k.resource}}
		if s != nil {
			st.Details.UID = s.uid
		}
		writeObject(rw, http.StatusOK, st)
		return nil
	})
}

// owned returns the store's record of ns/name, refusing (403) one another
// source owns.
func (w *writer) owned(r *http.Request, k writeKind, ns, name string) (*stored, error) {
	s, err := w.lookup(k, ns, name)
	if err != nil {
		return nil, err
	}
	return s, w.writable(r, k, name, s)
}

// preconditions checks a stated UID against the stored one and a stated
// resourceVersion against the one GET serves: 409 Conflict when stale.
func (w *writer) preconditions(r *http.Request, k writeKind, ns, name string, s *stored, pre precond) error {
	if pre.uid != "" && s != nil && string(s.uid) != pre.uid {
		return conflict(k, name, fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", pre.uid, s.uid))
	}
	if pre.resourceVersion != "" {
		if cur := w.served(r, k, ns, name); cur == nil || cur.GetResourceVersion() != pre.resourceVersion {
			return conflict(k, name, "the object has been modified; please apply your changes to the latest version and try again")
		}
	}
	return nil
}

// patchPrecond keeps the preconditions the patch itself states: those of
// the patched object that differ from the persisted manifest's.
func patchPrecond(curJSON []byte, pre precond) precond {
	var cur struct {
		Metadata struct {
			UID             string `json:"uid"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(curJSON, &cur)
	if pre.uid == cur.Metadata.UID {
		pre.uid = ""
	}
	if pre.resourceVersion == cur.Metadata.ResourceVersion {
		pre.resourceVersion = ""
	}
	return pre
}

// keepUID keeps the metadata.uid a persisted manifest declares (pushed
// through the push routes, where it is part of the pod's identity), so an
// edit through the API is the same pod, not a new incarnation.
func keepUID(m map[string]any, cur []byte) {
	var c struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if yaml.Unmarshal(cur, &c) != nil || c.Metadata.UID == "" {
		return
	}
	m["metadata"].(map[string]any)["uid"] = c.Metadata.UID
}

// isRace reports a Put refused because the manifest changed since it was
// read.
func isRace(err error) bool {
	var coded interface{ HTTPStatus() int }
	return errors.As(err, &coded) && coded.HTTPStatus() == http.StatusConflict
}

// deleteOptions reads DeleteOptions from the body (kubectl sends one) and
// the query of a delete of the kind's object name.
func deleteOptions(r *http.Request, k writeKind, name string) (metav1.DeleteOptions, error) {
	var o metav1.DeleteOptions
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return o, bodyError(err)
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == mediaProtobuf && len(body) > 0 {
		if body, err = fromProtobuf(k, name, body, &metav1.DeleteOptions{}); err != nil {
			return o, err
		}
	}
	if len(body) > 0 {
		if err := json.Unmarshal(body, &o); err != nil {
			return o, badRequest("the body is not DeleteOptions: " + err.Error())
		}
	}
	if g := r.URL.Query().Get("gracePeriodSeconds"); g != "" {
		n, err := strconv.ParseInt(g, 10, 64)
		if err != nil {
			return o, badRequest("gracePeriodSeconds: " + err.Error())
		}
		o.GracePeriodSeconds = &n
	}
	return o, nil
}

// answer writes the written object: as GET now serves it once the store
// shows it, else (a dry run, or the store not there yet) as decoded, a
// Secret's values withheld as GET withholds them.
func (w *writer) answer(rw http.ResponseWriter, r *http.Request, k writeKind, ns, name string, res sources.PutResult, dry bool, code int) {
	obj := res.Object
	if !dry {
		if res.Refusal != "" {
			rw.Header().Add("Warning", quoteWarning("persisted but not admitted: "+res.Refusal))
		}
		if cur := w.served(r, k, ns, name); cur != nil {
			writeObject(rw, code, cur)
			return
		}
	}
	if s, ok := obj.(*v1.Secret); ok {
		s = s.DeepCopy()
		registry.WithholdSecret(s)
		obj = s
	}
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: k.kind})
	writeObject(rw, code, obj)
}
