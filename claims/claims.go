// Package claims serves the node's PersistentVolumeClaims: the claims its
// sources declare and the engine volumes that hold claims' data (made by
// the first pod using a claim, kept when pods go), listed together, and
// deleted only when no pod uses them.
package claims

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/berth-dev/berth/model"
	"github.com/berth-dev/berth/podview"
	"github.com/berth-dev/berth/runtime"
	"github.com/berth-dev/berth/store"
)

// Annotations on listed claims.
const (
	// AnnotationSource is the source that declares the claim or whose pod
	// made its volume.
	AnnotationSource = "berth.io/source"
	// AnnotationVolume is the engine volume holding the claim's data.
	AnnotationVolume = "berth.io/volume"
	// AnnotationUsedBy lists the pods (namespace/name) whose spec mounts it.
	AnnotationUsedBy = "berth.io/used-by"
)

// ErrNotFound and ErrInUse are wrapped by Delete's refusals.
var (
	ErrNotFound = errors.New("not found")
	ErrInUse    = errors.New("in use")
)

// Engine is the part of runtime.Runtime claims need.
type Engine interface {
	ListVolumes(ctx context.Context, match map[string]string) ([]runtime.VolumeInfo, error)
	RemoveVolume(ctx context.Context, name string) error
}

// Service lists and deletes the claims of one node.
type Service struct {
	store  *store.Store
	engine Engine
	node   string
}

// New returns the claims of node, from st and engine.
func New(st *store.Store, engine Engine, node string) *Service {
	return &Service{store: st, engine: engine, node: node}
}

// Seed records in the store the claims' volumes the engine holds (made
// by earlier runs): called at start, before any pod runs, so that a claim
// whose data exists is Bound at once.
func (s *Service) Seed(ctx context.Context) error {
	vols, err := s.engine.ListVolumes(ctx, map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: s.node})
	if err != nil {
		return err
	}
	for _, v := range vols {
		ns, name := v.Labels[runtime.LabelClaimNamespace], v.Labels[runtime.LabelClaimName]
		if ns == "" || name == "" {
			continue
		}
		if err := s.store.SetClaimVolume(v.Labels[runtime.LabelSource], ns+"/"+name, v.Name); err != nil {
			return err
		}
	}
	return nil
}

// List returns every claim, ordered by namespace/name, bound as the
// Kubernetes API serves them (the store's claim volumes): those declared
// by a source (Pending until a pod made their volume, then Bound, with
// their storage request as capacity) and those whose volume a pod made
// without a declaration (Bound, no capacity).
func (s *Service) List(ctx context.Context) ([]v1.PersistentVolumeClaim, error) {
	created := map[string]metav1.Time{}
	vols, err := s.engine.ListVolumes(ctx, map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: s.node})
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		created[v.Name] = metav1.NewTime(v.CreatedAt)
	}
	snap := s.store.Snapshot()
	bound, err := snap.AllClaimVolumes()
	if err != nil {
		return nil, err
	}
	// By source/namespace/name: each source has its own claims' data.
	byKey := map[string]string{}
	for _, b := range bound {
		if b.Volume != "" {
			byKey[store.ClaimVolumeID(b.Source, b.Claim)] = b.Volume
		}
	}
	users, err := s.users()
	if err != nil {
		return nil, err
	}
	declared, err := snap.Objects(nil, model.KindPVC)
	if err != nil {
		return nil, err
	}
	var out []v1.PersistentVolumeClaim
	seen := map[string]bool{}
	for _, o := range declared {
		c := o.PVC.DeepCopy()
		c.Annotations = withAnnotation(c.Annotations, AnnotationSource, o.Source)
		s.fill(c, o.Source, byKey, users)
		if c.CreationTimestamp.IsZero() {
			c.CreationTimestamp = created[c.Spec.VolumeName]
		}
		out = append(out, *c)
		seen[o.Source+"/"+o.Key] = true
	}
	for key, vol := range byKey {
		if seen[key] {
			continue
		}
		src, claim, _ := strings.Cut(key, "/")
		ns, name, _ := strings.Cut(claim, "/")
		c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{AnnotationSource: src}, CreationTimestamp: created[vol]}}
		s.fill(c, src, byKey, users)
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Namespace+"/"+a.Name+"/"+a.Annotations[AnnotationSource] < b.Namespace+"/"+b.Name+"/"+b.Annotations[AnnotationSource]
	})
	return out, nil
}

// fill sets c's status and volume as the API serves them, and its users;
// vols maps source/namespace/name to the claim's volume.
func (s *Service) fill(c *v1.PersistentVolumeClaim, source string, vols map[string]string, users map[string][]string) {
	key := c.Namespace + "/" + c.Name
	c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: model.KindPVC}
	vol := vols[source+"/"+key]
	podview.ClaimStatus(c, vol)
	c.Annotations = withAnnotation(c.Annotations, AnnotationVolume, vol)
	if u := users[source+"/"+key]; len(u) > 0 {
		c.Annotations = withAnnotation(c.Annotations, AnnotationUsedBy, strings.Join(u, ","))
	}
}

func withAnnotation(m map[string]string, k, v string) map[string]string {
	if v == "" {
		return m
	}
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// users maps each claim (source/namespace/name) to the desired pods
// mounting it.
func (s *Service) users() (map[string][]string, error) {
	pods, err := s.store.Pods(nil)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range pods {
		for _, v := range p.Spec.Spec.Volumes {
			if c := v.PersistentVolumeClaim; c != nil {
				k := p.Source + "/" + p.Spec.Namespace + "/" + c.ClaimName
				out[k] = append(out[k], p.Key)
			}
		}
	}
	return out, nil
}

// Delete removes the data volumes of claim namespace/name (of every
// source). It refuses
// (ErrInUse) while a desired pod mounts the claim or any container still
// holds its volume, and answers ErrNotFound when the claim has no volume.
// A claim its source still declares stays listed, Pending, and a pod using
// it again starts with an empty volume; one a pod made again while Delete
// ran stays Bound to it.
func (s *Service) Delete(ctx context.Context, namespace, name string) error {
	users, err := s.users()
	if err != nil {
		return err
	}
	var used []string
	for k, u := range users {
		if strings.HasSuffix(k, "/"+namespace+"/"+name) {
			used = append(used, u...)
		}
	}
	if len(used) > 0 {
		sort.Strings(used)
		return fmt.Errorf("persistentvolumeclaim %q is used by pod %s: %w", name, strings.Join(used, ", "), ErrInUse)
	}
	match := map[string]string{runtime.LabelManaged: "true", runtime.LabelNode: s.node,
		runtime.LabelClaimNamespace: namespace, runtime.LabelClaimName: name}
	vols, err := s.engine.ListVolumes(ctx, match)
	if err != nil {
		return err
	}
	if len(vols) == 0 {
		return fmt.Errorf("persistentvolumeclaim %q has no volume on this node: %w", name, ErrNotFound)
	}
	key := namespace + "/" + name
	for _, v := range vols {
		if err := s.engine.RemoveVolume(ctx, v.Name); err != nil {
			if errors.Is(err, runtime.ErrVolumeInUse) {
				return fmt.Errorf("persistentvolumeclaim %q: a container still holds its volume: %w", name, ErrInUse)
			}
			return err
		}
		if err := s.store.SetClaimVolume(v.Labels[runtime.LabelSource], key, ""); err != nil {
			return err
		}
	}
	// A pod admitted meanwhile may have made a volume again, its binding
	// recorded before the unbinding above (then no write): bind it again.
	// One made after this list is recorded by the controller, after the
	// unbinding, so the claim ends bound to whatever volume exists.
	again, err := s.engine.ListVolumes(ctx, match)
	if err != nil {
		return err
	}
	for _, v := range again {
		if err := s.store.SetClaimVolume(v.Labels[runtime.LabelSource], key, v.Name); err != nil {
			return err
		}
	}
	return nil
}
