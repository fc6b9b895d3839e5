package kubeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/yaml"

	"github.com/berth-dev/berth/manifest"
)

// systemFields are the metadata fields the apiserver sets itself and
// ignores in a written object; uid and resourceVersion are preconditions.
var systemFields = []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
	"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// servedAnnotations are those the read side adds; written back (a
// `kubectl replace` of `get -o yaml`), they are dropped.
var servedAnnotations = []string{SourceAnnotation, OriginAnnotation, RejectedAnnotation, ReadOnlyAnnotation}

// precond are the preconditions a written object states.
type precond struct {
	uid, resourceVersion string
}

// readBody reads the body of a create or replace of kind k (JSON, YAML or
// Kubernetes protobuf; name is "" for a create) as JSON; other types are a
// 415. The work each encoding expands to is bounded before it is done: a
// protobuf body's lists and values (checkProtobuf), a YAML body's aliases
// (manifest.YAMLToJSON), and the JSON any of them becomes, at most
// maxPatchedBytes; objectMap bounds its shape.
func readBody(r *http.Request, k writeKind, name string) ([]byte, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "", "application/json", "application/yaml", "application/x-yaml", "text/yaml", mediaProtobuf:
	default:
		return nil, unsupportedMedia(ct, "application/json, application/yaml, "+mediaProtobuf)
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, bodyError(err)
	}
	switch ct {
	case "application/json":
	case mediaProtobuf:
		if data, err = fromProtobuf(k, name, data, k.zero()); err != nil {
			return nil, err
		}
	default:
		var ee *manifest.ExpansionError
		if data, err = manifest.YAMLToJSON(data, false); errors.As(err, &ee) {
			return nil, tooLarge(k, name, fmt.Sprintf("the YAML body of %s: %v", describe(k, name), ee))
		} else if err != nil {
			return nil, badRequest("the body is neither JSON nor YAML: " + err.Error())
		}
	}
	if len(data) > maxPatchedBytes {
		return nil, tooLarge(k, name, fmt.Sprintf("the body of %s is larger than %d bytes as JSON, berth's limit for an object", describe(k, name), maxPatchedBytes))
	}
	return data, nil
}

// describe names the object of a write in messages: Pod "web", or the
// new Pod when the name is not known yet.
func describe(k writeKind, name string) string {
	if name == "" {
		return "the new " + k.kind
	}
	return fmt.Sprintf("%s %q", k.kind, name)
}

// objectMap decodes j, the JSON of a written object (a body, or a patched
// object), into a map once a scan of it (manifest.ScanJSON, no allocation
// per value) found it within maxPatchListItems items in each list and
// maxPatchElements values in all: decoding 2 MiB of `{},` costs hundreds
// of MiB. Past them it is a 413 naming the limit.
func objectMap(k writeKind, name string, j []byte) (map[string]any, error) {
	s := manifest.ScanJSON(j, manifest.ShapeLimits{ListItems: maxPatchListItems, Values: maxPatchElements})
	switch {
	case s.TooLong != nil:
		return nil, tooLarge(k, name, fmt.Sprintf("%s has more than %d items in %s: at most %d items in one list of an object",
			describe(k, name), maxPatchListItems, s.TooLong.Path, maxPatchListItems))
	case s.TooMany:
		return nil, tooLarge(k, name, fmt.Sprintf("%s has more than %d values (map entries and list items), at most %d in one object",
			describe(k, name), maxPatchElements, maxPatchElements))
	case s.TooDeep:
		return nil, badRequest(fmt.Sprintf("%s nests deeper than JSON is decoded", describe(k, name)))
	}
	return decodeMap(j)
}

func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
			Code: http.StatusRequestEntityTooLarge, Reason: metav1.StatusReasonRequestEntityTooLarge,
			Message: fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit)}}
	}
	return badRequest("reading the body: " + err.Error())
}

func unsupportedMedia(ct, want string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure,
		Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s (got %q)", want, ct)}}
}

// decodeMap parses JSON into a map keeping numbers exact.
func decodeMap(j []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, badRequest("the body is not a JSON object")
	}
	return m, nil
}

// normalize makes m the kind's object ns/name as the apiserver would take
// it: kind and apiVersion checked and set, namespace and name from the URL
// (urlName "" for a create: the body's name, or one made from
// generateName), system fields and served annotations dropped. It returns
// the name and the preconditions m stated.
func normalize(m map[string]any, k writeKind, ns, urlName string) (string, precond, error) {
	if v, ok := m["apiVersion"]; ok && v != "v1" {
		return "", precond{}, badRequest(fmt.Sprintf("apiVersion %v: want v1 for %s", v, k.kind))
	}
	if v, ok := m["kind"]; ok && v != k.kind {
		return "", precond{}, badRequest(fmt.Sprintf("kind %v does not match %s, the kind of %s", v, k.kind, k.resource))
	}
	m["apiVersion"], m["kind"] = "v1", k.kind
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	if v, ok := md["namespace"]; ok && v != "" && v != ns {
		return "", precond{}, badRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	md["namespace"] = ns
	name, _ := md["name"].(string)
	switch {
	case urlName != "" && name != "" && name != urlName:
		return "", precond{}, badRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", name, urlName))
	case urlName != "":
		name = urlName
	case name == "":
		gen, _ := md["generateName"].(string)
		if gen == "" {
			return "", precond{}, invalid(k, "", []manifest.ManifestError{{PodKey: "-", Field: "metadata.name",
				Err: "Required value: name or generateName is required"}})
		}
		name = gen + utilrand.String(5)
	}
	md["name"] = name
	var pre precond
	pre.uid, _ = md["uid"].(string)
	pre.resourceVersion, _ = md["resourceVersion"].(string)
	for _, f := range systemFields {
		delete(md, f)
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		for _, a := range servedAnnotations {
			delete(ann, a)
		}
		if len(ann) == 0 {
			delete(md, "annotations")
		}
	}
	delete(m, "status")
	return name, pre, nil
}

// manifestOf is the manifest persisted for m: YAML, readable in root_dir.
func manifestOf(m map[string]any) ([]byte, error) {
	j, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

// quoteWarning formats a Warning header value (RFC 7234 code 299).
func quoteWarning(msg string) string {
	return `299 - "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(msg) + `"`
}
