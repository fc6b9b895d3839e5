package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/validation"
)

// Options say what the pods of a source may do. The fields up to NodeIP are
// validation.Options' and mean what they say there.
type Options struct {
	Level                model.PodSecurityLevel
	HostPorts            model.PortRanges
	AllowedUnsafeSysctls []string
	MaxContainers        int
	SandboxRepositories  []string
	NodeIP               string
	// DeriveUIDs is set for sources reached over the network: a pod's UID,
	// which names its host directories, is then derived from the source and
	// the manifest, so no client can choose or take another pod's.
	DeriveUIDs bool
	// Node, when set, is part of the UID derived for pods without
	// metadata.uid, so berths of different nodes sharing one engine never
	// name containers alike.
	Node string
	// FileOrigin says that origins are file paths (the file source, berth
	// validate): a ContainerManifest without an id is then named after its
	// file, as the seed kubelet's file source named it (LegacyPodName).
	FileOrigin bool
}

// validationOptions is the part of o that validation reads.
func (o Options) validationOptions() validation.Options {
	return validation.Options{Level: o.Level, HostPorts: o.HostPorts, AllowedUnsafeSysctls: o.AllowedUnsafeSysctls,
		MaxContainers: o.MaxContainers, SandboxRepositories: o.SandboxRepositories, NodeIP: o.NodeIP}
}

// Validate checks a defaulted pod as Decode does (validation.Pod under
// opts), and returns every problem with its JSON field path. It does not
// modify the pod.
func Validate(pod *v1.Pod, opts Options) field.ErrorList {
	return validation.Pod(pod, opts.validationOptions())
}

// uidScope is what derived UIDs are unique within: the node and the source.
func uidScope(node, source string) string {
	if node == "" {
		return source
	}
	return node + "/" + source
}

// Decode parses, defaults and validates the manifests of one origin (a file,
// URL or key) of the source named source.
//
// data may hold Kubernetes v1 Pods in YAML or JSON, several YAML documents
// separated by "---", v1 List or PodList objects, and legacy ContainerManifests
// (see legacy.go), singly or as a sequence. Empty documents and empty input
// declare no pods and are not errors; documents of other Kubernetes kinds (a
// Service, a Deployment, a custom resource) are skipped with a warning
// (DecodeAll's Warnings), an unknown kind of the core API is an error. Decoding is strict: unknown and
// duplicate fields are errors naming the field.
//
// Every pod that passes validation is returned; each rejected pod or document
// adds one or more ManifestErrors. An error carries the PodKey when the pod's
// name is known, and then its Field is a path inside that pod
// (spec.containers[0].image); otherwise PodKey is empty, the error stands for
// the whole origin (callers keep the pods the origin declared before), and
// Field is a path inside the document.
//
// A document that cannot be parsed does not discard its origin's other
// documents: Decode returns the pods of the good documents together with the
// whole-origin error, so pods that were in the broken document keep running
// from their last good spec, and the rest of the origin still updates.
//
// A second pod with the same key in one call is rejected; the first is kept.
// Decode never panics on any input.
//
// Work is bounded: at most MaxManifestObjects documents and list items are
// decoded (the rest of the origin is a whole-origin error), and at most
// MaxManifestErrors errors are returned (then one whole-origin error says
// that more were left out).
func Decode(source, origin string, data []byte, opts Options) ([]Desired, []ManifestError) {
	r := DecodeAll(source, origin, data, opts)
	return r.Pods, r.Errors
}

// Decoded is what one origin declares: its valid pods and objects, the
// errors of the rest, and the warnings of documents skipped because they
// declare objects berth does not serve (a Service, a Deployment).
type Decoded struct {
	Pods     []Desired
	Objects  []Object
	Errors   []ManifestError
	Warnings []string
}

// DecodeAll is Decode with the ConfigMaps and Secrets (kind ConfigMap and
// Secret, v1, top level or in Lists) the origin declares beside its pods.
// An object's errors carry its Kind and key, so that its last good version
// is kept as a pod's is.
func DecodeAll(source, origin string, data []byte, opts Options) Decoded {
	d := &decoder{source: source, origin: origin, opts: opts, seen: map[string]bool{}, seenObj: map[string]bool{}}
	docs, err := splitDocuments(data, MaxManifestObjects)
	if err != nil {
		d.fail("", "", err.Error())
		d.exhausted = errors.Is(err, errTooManyObjects)
	}
	for i, doc := range docs {
		if len(docs) > 1 {
			d.doc = fmt.Sprintf(" (document %d)", i+1)
		}
		if !d.take() {
			break
		}
		d.line = doc.line
		d.document(doc.data)
	}
	return Decoded{Pods: d.pods, Objects: d.objects, Errors: d.errs, Warnings: d.warnings}
}

// MaxManifestObjects bounds the documents plus list items decoded from one
// origin, so that a hostile file of millions of tiny documents or list items
// costs a bounded time and memory.
const MaxManifestObjects = 10000

// MaxManifestErrors bounds the errors Decode returns for one origin.
const MaxManifestErrors = 100

var errTooManyObjects = fmt.Errorf("too many documents and list items (more than %d)", MaxManifestObjects)

type decoder struct {
	source, origin string
	opts           Options
	doc            string // suffix for whole-origin errors of multi-document input
	line           int    // the origin's line the current document starts on
	seen           map[string]bool
	seenObj        map[string]bool
	pods           []Desired
	objects        []Object
	errs           []ManifestError
	warnings       []string
	taken          int  // documents and list items taken so far
	dropped        int  // errors beyond MaxManifestErrors
	exhausted      bool // MaxManifestObjects reached and reported
}

// take counts one more document or list item and reports whether it may be
// decoded; the first refusal is a whole-origin error.
func (d *decoder) take() bool {
	if d.taken >= MaxManifestObjects {
		if !d.exhausted {
			d.exhausted = true
			d.doc = ""
			d.fail("", "", errTooManyObjects.Error())
		}
		return false
	}
	d.taken++
	return true
}

// fail records an error; an empty key makes it a whole-origin error. Beyond
// MaxManifestErrors errors, the last one is a whole-origin error that counts
// those left out (it keeps every pod the origin declared before).
func (d *decoder) fail(key, fieldPath, msg string) { d.failKind("", key, fieldPath, msg) }

// failKind records an error of an object of kind ("" for a pod).
func (d *decoder) failKind(kind, key, fieldPath, msg string) {
	if key == "" {
		msg += d.doc
	}
	if len(d.errs) >= MaxManifestErrors {
		if d.dropped == 0 {
			d.dropped = 1 // the error this one replaces
		}
		d.dropped++
		d.errs[len(d.errs)-1] = ManifestError{Origin: d.origin,
			Err: fmt.Sprintf("too many errors: %d more not shown", d.dropped)}
		return
	}
	d.errs = append(d.errs, ManifestError{Origin: d.origin, Kind: kind, PodKey: key, Field: fieldPath, Err: msg})
}

// failField records a validation error, prefixing its path with prefix when
// the error is not tied to a pod.
func (d *decoder) failField(key, prefix string, e *field.Error) {
	d.fail(key, joinPath(key, prefix, e.Field), e.ErrorBody())
}

func joinPath(key, prefix, p string) string {
	if key != "" || prefix == "" {
		return p
	}
	if p == "" || p == "<nil>" {
		return prefix
	}
	if strings.HasPrefix(p, "[") {
		return prefix + p
	}
	return prefix + "." + p
}

func (d *decoder) document(doc []byte) {
	defer func() {
		if r := recover(); r != nil {
			d.fail("", "", fmt.Sprintf("internal error decoding manifest: %v", r))
		}
	}()
	j, err := toJSON(doc)
	if err != nil {
		lead := len(doc) - len(bytes.TrimLeft(doc, " \t\r\n"))
		d.fail("", "", shiftLines(err.Error(), d.line-1+bytes.Count(doc[:lead], []byte("\n"))))
		return
	}
	switch {
	case len(j) == 0 || string(j) == "null":
	case j[0] == '[':
		d.legacyList(j)
	case j[0] == '{':
		d.object(j, "")
	default:
		d.fail("", "", "manifest must be an object or a list of ContainerManifests")
	}
}

func toJSON(doc []byte) ([]byte, error) {
	doc = bytes.TrimSpace(doc)
	if json.Valid(doc) {
		return doc, nil
	}
	j, err := YAMLToJSON(doc, true)
	if err != nil {
		return nil, errors.New(oneLine(err.Error()))
	}
	return bytes.TrimSpace(j), nil
}

// bounded checks the shape of one object's JSON (of kind, "" for a pod,
// key "" when unnamed) before it is decoded into Go values: each list at
// most MaxListItems items (or the source's container limit, when larger),
// at most MaxValues values in all. Past them it records the error and
// returns false.
func (d *decoder) bounded(j []byte, kind, key, prefix string) bool {
	items := max(MaxListItems, d.opts.validationOptions().ContainerLimit())
	s := ScanJSON(j, ShapeLimits{ListItems: items, Values: MaxValues})
	switch {
	case s.TooLong != nil:
		d.failKind(kind, key, joinPath(key, prefix, s.TooLong.Path), fmt.Sprintf("Too many: must have at most %d items", items))
	case s.TooMany:
		d.failKind(kind, key, joinPath(key, prefix, ""), fmt.Sprintf("Too many: more than %d values (map entries and list items), the most one object may have", MaxValues))
	case s.TooDeep:
		d.failKind(kind, key, joinPath(key, prefix, ""), fmt.Sprintf("nested more than %d levels deep", maxShapeDepth))
	default:
		return true
	}
	return false
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// object decodes one top-level (prefix "") or list item mapping.
func (d *decoder) object(j []byte, prefix string) {
	var keys map[string]json.RawMessage
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &keys); err != nil {
		d.fail("", prefix, jsonMessage(err))
		return
	}
	_, hasKind := keys["kind"]
	_, hasAPIVersion := keys["apiVersion"]
	_, hasVersion := keys["version"]
	if prefix == "" && hasVersion && !hasKind && !hasAPIVersion {
		d.legacy(j, "")
		return
	}
	var tm typeMeta
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &tm); err != nil {
		d.fail("", prefix, jsonMessage(err))
		return
	}
	kinds := []string{"Pod", "List", "PodList", model.KindConfigMap, model.KindSecret, model.KindPVC}
	if prefix != "" {
		kinds = []string{"Pod", model.KindConfigMap, model.KindSecret, model.KindPVC}
	}
	switch {
	case tm.Kind == "":
		d.failField("", prefix, field.Required(field.NewPath("kind"), ""))
	case !slices.Contains(kinds, tm.Kind) && notServed(tm.Kind, tm.APIVersion):
		d.skip(prefix, tm.Kind, tm.APIVersion)
	case !slices.Contains(kinds, tm.Kind):
		d.failField("", prefix, field.NotSupported(field.NewPath("kind"), tm.Kind, kinds))
	case tm.APIVersion != "v1":
		d.failField("", prefix, field.NotSupported(field.NewPath("apiVersion"), tm.APIVersion, []string{"v1"}))
	case tm.Kind == "Pod":
		if d.bounded(j, "", podKeyOf(j), prefix) {
			d.pod(j, prefix)
		}
	case tm.Kind == model.KindConfigMap || tm.Kind == model.KindSecret || tm.Kind == model.KindPVC:
		if d.bounded(j, tm.Kind, podKeyOf(j), prefix) {
			d.configObject(j, prefix, tm.Kind)
		}
	default:
		d.list(j, tm.Kind)
	}
}

func (d *decoder) list(j []byte, kind string) {
	var l struct {
		typeMeta
		Metadata json.RawMessage   `json:"metadata"`
		Items    []json.RawMessage `json:"items"`
	}
	strict, err := sigsjson.UnmarshalStrict(j, &l)
	if err != nil {
		d.fail("", "", jsonMessage(err))
		return
	}
	if len(strict) > 0 {
		for _, e := range strict {
			d.strictError("", "", e, reflect.TypeOf(l))
		}
		return
	}
	for i, item := range l.Items {
		if !d.take() {
			return
		}
		prefix := fmt.Sprintf("items[%d]", i)
		item = bytes.TrimSpace(item)
		if len(item) == 0 || item[0] != '{' {
			d.fail("", prefix, "list item must be an object")
			continue
		}
		if kind == "PodList" {
			item = withPodTypeMeta(item)
		}
		d.object(item, prefix)
	}
}

// withPodTypeMeta fills in kind and apiVersion of a PodList item that omits
// them.
func withPodTypeMeta(item []byte) []byte {
	var tm typeMeta
	if sigsjson.UnmarshalCaseSensitivePreserveInts(item, &tm) != nil || (tm.Kind != "" && tm.APIVersion != "") {
		return item
	}
	var m map[string]json.RawMessage
	if sigsjson.UnmarshalCaseSensitivePreserveInts(item, &m) != nil {
		return item
	}
	if tm.Kind == "" {
		m["kind"] = json.RawMessage(`"Pod"`)
	}
	if tm.APIVersion == "" {
		m["apiVersion"] = json.RawMessage(`"v1"`)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return item
	}
	return out
}

// podKeyOf returns "namespace/name" of a pod object, or "" when its name is
// not a readable string.
func podKeyOf(j []byte) string {
	var m struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if sigsjson.UnmarshalCaseSensitivePreserveInts(j, &m) != nil || m.Metadata.Name == "" {
		return ""
	}
	return PodKey(m.Metadata.Namespace, m.Metadata.Name)
}

// PodKey is the key of a pod in the store and in errors, "namespace/name",
// with the default namespace for "".
func PodKey(namespace, name string) string {
	if namespace == "" {
		namespace = v1.NamespaceDefault
	}
	return namespace + "/" + name
}

func (d *decoder) pod(j []byte, prefix string) {
	key := podKeyOf(j)
	pod := &v1.Pod{}
	if reported, ok := d.unmarshalStrict(j, pod, key, prefix); ok {
		d.accept(pod, prefix, reported, nil)
	}
}

// accept defaults and validates a decoded pod and adds it unless its key was
// already taken in this call. reported are the paths decoding already
// reported: the pod is refused, and validation errors at or under them,
// which only repeat them, are left out. rename, when set, turns a v1 path
// into the manifest's own (legacy manifests).
func (d *decoder) accept(pod *v1.Pod, prefix string, reported []string, rename func(string) string) {
	key := ""
	if pod.Name != "" {
		key = PodKey(pod.Namespace, pod.Name)
	}
	declared := pod.UID
	var errs field.ErrorList
	if d.opts.DeriveUIDs {
		// The declared UID is checked before the derived one replaces it.
		errs = validation.UID(pod.UID, field.NewPath("metadata", "uid"))
	}
	Default(uidScope(d.opts.Node, d.source), pod, d.opts.DeriveUIDs)
	errs = append(errs, Validate(pod, d.opts)...)
	if len(errs) > 0 || len(reported) > 0 {
		for _, e := range errs {
			if rename != nil {
				e.Field = rename(e.Field)
			}
			if !underAny(e.Field, reported) {
				d.failField(key, prefix, e)
			}
		}
		return
	}
	if d.seen[key] {
		e := field.Duplicate(field.NewPath("metadata", "name"), pod.Name)
		e.Detail = "pod " + key + " is declared twice in this origin"
		d.failField(key, prefix, e)
		return
	}
	d.seen[key] = true
	d.pods = append(d.pods, Desired{Pod: pod, Origin: d.origin, DeclaredUID: declared})
}

// strictError records an unknown or duplicate field of a document decoded
// into t, suggesting the known field an unknown one misspells. It returns
// the field's path.
func (d *decoder) strictError(key, prefix string, err error, t reflect.Type) string {
	msg := err.Error()
	fe, ok := err.(sigsjson.FieldError)
	if !ok {
		d.fail(key, prefix, msg)
		return ""
	}
	switch {
	case strings.HasPrefix(msg, "unknown field"):
		msg = "unknown field"
		if s := suggestField(t, fe.FieldPath()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
	case strings.HasPrefix(msg, "duplicate field"):
		msg = "duplicate field"
	}
	d.fail(key, joinPath(key, prefix, fe.FieldPath()), msg)
	return fe.FieldPath()
}

// underAny reports whether path is one of paths or inside one of them.
func underAny(path string, paths []string) bool {
	for _, p := range paths {
		if path == p || strings.HasPrefix(path, p+".") || strings.HasPrefix(path, p+"[") {
			return true
		}
	}
	return false
}

func (d *decoder) jsonError(j []byte, key, prefix string, err error) {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		d.fail(key, joinPath(key, prefix, typeErrorPath(j, te)), fmt.Sprintf("Invalid value: %s: expected %s", te.Value, te.Type))
		return
	}
	d.fail(key, prefix, jsonMessage(err))
}

// jsonFieldPath drops the Go names of embedded structs (ProbeHandler) from an
// encoding/json field path.
func jsonFieldPath(p string) string {
	parts := strings.Split(p, ".")
	kept := parts[:0]
	for _, part := range parts {
		if part != "" && !(part[0] >= 'A' && part[0] <= 'Z') {
			kept = append(kept, part)
		}
	}
	return strings.Join(kept, ".")
}

func jsonMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// unmarshalStrict decodes j into v (a pointer) and records, against key,
// every value of the wrong type or refused by its type (a bad quantity), each
// naming its field, and every unknown or duplicate field; the bad values are
// left zero and the rest is decoded. It returns the paths it reported, and
// whether v may be validated: false when decoding failed in a way no field
// explains.
func (d *decoder) unmarshalStrict(j []byte, v any, key, prefix string) (reported []string, ok bool) {
	t := reflect.TypeOf(v).Elem()
	strict, err := sigsjson.UnmarshalStrict(j, v)
	if err != nil {
		bad := badValues(j, t)
		if len(bad) == 0 {
			d.jsonError(j, key, prefix, err)
			return nil, false
		}
		for _, b := range bad {
			p := b.path.String()
			d.fail(key, joinPath(key, prefix, p), b.msg)
			reported = append(reported, p)
		}
		reflect.ValueOf(v).Elem().SetZero()
		if strict, err = sigsjson.UnmarshalStrict(withoutValues(j, bad), v); err != nil {
			d.jsonError(j, key, prefix, err)
			return reported, false
		}
	}
	for _, e := range strict {
		if p := d.strictError(key, prefix, e, t); p != "" {
			reported = append(reported, p)
		}
	}
	return reported, true
}

// PodSequenceAsList turns a top-level YAML/JSON sequence whose items all
// carry a kind or apiVersion (v1 Pods, as a legacy key may hold) into a v1
// List, which Decode reads; Decode takes any other sequence for legacy
// ContainerManifests. Other data is returned as is.
func PodSequenceAsList(data []byte) []byte {
	t := bytes.TrimSpace(bytes.TrimPrefix(data, utf8BOM))
	if len(t) == 0 || (t[0] != '[' && t[0] != '-') {
		return data
	}
	j, err := YAMLToJSON(t, false)
	if err != nil {
		return data // Decode reports it
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(j, &items) != nil || len(items) == 0 {
		return data
	}
	for _, it := range items {
		_, kind := it["kind"]
		_, apiVersion := it["apiVersion"]
		if !kind && !apiVersion {
			return data
		}
	}
	var raw []json.RawMessage
	if json.Unmarshal(j, &raw) != nil {
		return data
	}
	list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": raw})
	if err != nil {
		return data
	}
	return list
}
