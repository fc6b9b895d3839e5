package sources

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/berth-dev/berth/manifest"
)

// maxOwnersBytes bounds the owners file read at start: far more than the
// keys MaxManifestBytes of manifests can declare.
const maxOwnersBytes = 64 << 20

// declOwners decides, for a file source, which file declares each pod and
// object key. The file that declared a key first keeps it while it claims
// it (declares it, failed to decode, or declares it invalid), whatever the
// names sort to; a second file declaring it is refused naming the first.
// Only a key nobody held goes to the first file in name order.
//
// A key whose file stops declaring it is held on its last declaration
// until the file has stayed so, unchanged, for hold (a file being
// rewritten, emptied for an instant, or renamed, whose new name a scan has
// not listed yet), then let go; a file renamed keeps
// its keys under its new name, and an unlinked file's keys go at once. The
// owners are kept in the file at path (none when ""), so a restart keeps
// them too. Not safe for concurrent use: the FileSource's Run loop owns it.
type declOwners struct {
	path  string
	hold  time.Duration
	owner map[string]string // ref → origin
	pods  map[string]manifest.Desired
	objs  map[string]manifest.Object
	since map[string]time.Time // ref → when its owner stopped declaring it
	dirty bool
}

// fileFacts is what a scan found of the files: which were listed and read,
// which were unlinked since the last scan, and what failed.
type fileFacts struct {
	present func(origin string) bool
	removed func(origin string) bool
	// changedAt is when the watch last saw the file change (zero: not
	// lately); a hold lasts until the file stayed unchanged for hold.
	changedAt func(origin string) time.Time
	// renamedTo is the file origin was renamed to ("" for none known).
	renamedTo func(origin string) string
	failed    map[string]bool // origins that failed whole
	invalid   map[string]bool // origin + "\x00" + ref declared invalid
}

func newDeclOwners(path string, hold time.Duration) *declOwners {
	return &declOwners{path: path, hold: hold, owner: map[string]string{}, pods: map[string]manifest.Desired{},
		objs: map[string]manifest.Object{}, since: map[string]time.Time{}}
}

func podRef(d manifest.Desired) string { return "Pod/" + manifest.PodKey(d.Pod.Namespace, d.Pod.Name) }
func objRef(o manifest.Object) string  { return o.Kind + "/" + o.Key() }

// load reads the owners a previous run kept; a missing file is none.
func (o *declOwners) load() error {
	if o.path == "" {
		return nil
	}
	f, err := os.Open(o.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxOwnersBytes+1))
	if err != nil {
		return err
	}
	if len(data) > maxOwnersBytes {
		return fmt.Errorf("%s is larger than %d MiB", o.path, maxOwnersBytes>>20)
	}
	owner := map[string]string{}
	if err := json.Unmarshal(data, &owner); err != nil {
		return fmt.Errorf("%s: %w", o.path, err)
	}
	o.owner = owner
	return nil
}

// save writes the owners when they changed, atomically.
func (o *declOwners) save() error {
	if o.path == "" || !o.dirty {
		return nil
	}
	data, err := json.Marshal(o.owner)
	if err != nil {
		return err
	}
	dir := filepath.Dir(o.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".owners-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), o.path); err != nil {
		return err
	}
	o.dirty = false
	return nil
}

// settle replaces u's pods and objects, every declaration of every file
// in name order, by the one kept per key, adds an error for each other,
// and returns the origins of the keys held (a scan after hold must decide
// them; empty when none is).
func (o *declOwners) settle(u *Update, facts fileFacts, now time.Time) (held map[string]bool) {
	held = map[string]bool{}
	var errs []manifest.ManifestError
	u.Pods, errs = settleKind(o, u.Pods, o.pods, podRef, func(d manifest.Desired) string { return d.Origin },
		func(a, b manifest.Desired) bool { return equality.Semantic.DeepEqual(a.Pod, b.Pod) }, podDuplicate, facts, now, held)
	u.Errors = append(u.Errors, errs...)
	u.Objects, errs = settleKind(o, u.Objects, o.objs, objRef, func(x manifest.Object) string { return x.Origin },
		sameObjectDecl, objectDuplicate, facts, now, held)
	u.Errors = append(u.Errors, errs...)
	return held
}

func sameObjectDecl(a, b manifest.Object) bool {
	return a.Kind == b.Kind && equality.Semantic.DeepEqual(a.ConfigMap, b.ConfigMap) &&
		equality.Semantic.DeepEqual(a.Secret, b.Secret) && equality.Semantic.DeepEqual(a.PVC, b.PVC)
}

// settleKind is settle for one kind of declaration; last holds the kept
// declaration of each ref of that kind.
func settleKind[T any](o *declOwners, items []T, last map[string]T, ref func(T) string, origin func(T) string,
	same func(a, b T) bool, duplicate func(T, string) manifest.ManifestError, facts fileFacts, now time.Time, held map[string]bool) (kept []T, errs []manifest.ManifestError) {
	byRef := map[string][]T{}
	var order []string
	for _, it := range items {
		r := ref(it)
		if _, ok := byRef[r]; !ok {
			order = append(order, r)
		}
		byRef[r] = append(byRef[r], it)
	}
	var gone []string
	for r := range last {
		if _, ok := byRef[r]; !ok {
			gone = append(gone, r)
		}
	}
	slices.Sort(gone)
	order = append(order, gone...)
	for _, r := range order {
		decls := byRef[r]
		prev, hadPrev := last[r]
		p := decide(o, r, decls, prev, hadPrev, origin, same, facts, now)
		switch {
		case p.idx >= 0:
			kept = append(kept, decls[p.idx])
			o.own(r, origin(decls[p.idx]))
			last[r] = decls[p.idx]
		case p.held:
			held[origin(prev)] = true
			kept = append(kept, prev)
		case p.claimed:
			// The owner's file failed, or declares the key invalid: the
			// informer keeps its last good object, and the key stays its.
		default:
			o.forget(r)
			delete(last, r)
		}
		for i, d := range decls {
			if i != p.idx {
				errs = append(errs, duplicate(d, o.owner[r]))
			}
		}
	}
	// Held declarations keep their place among their file's: origins in
	// ascending order, as the informer compares updates.
	slices.SortStableFunc(kept, func(a, b T) int { return strings.Compare(origin(a), origin(b)) })
	return kept, errs
}

// pick is decide's answer: the index in decls of the declaration kept, or
// -1 with held (the last kept declaration stays a while), claimed (the
// owner claims the key with nothing to send), or neither (nobody has it).
type pick struct {
	idx     int
	held    bool
	claimed bool
}

// decide picks the declaration kept for ref r among decls (every file's, in
// name order); prev is the one kept before, when hadPrev.
func decide[T any](o *declOwners, r string, decls []T, prev T, hadPrev bool, origin func(T) string, same func(a, b T) bool,
	facts fileFacts, now time.Time) pick {
	first := pick{idx: -1}
	if len(decls) > 0 {
		first.idx = 0
	}
	own, owned := o.owner[r]
	if !owned {
		return first
	}
	for i := range decls {
		if origin(decls[i]) == own {
			delete(o.since, r)
			return pick{idx: i}
		}
	}
	if facts.failed[own] || facts.invalid[own+"\x00"+r] {
		delete(o.since, r)
		return pick{idx: -1, claimed: true}
	}
	if facts.removed(own) {
		// Unlinked: its keys go at once, to the next declarer if any.
		delete(o.since, r)
		return first
	}
	if !facts.present(own) {
		// Renamed: the key follows the file to its new name, or to the
		// declaration equal to the last one kept.
		to := ""
		if facts.renamedTo != nil {
			to = facts.renamedTo(own)
		}
		for i := range decls {
			if (to != "" && origin(decls[i]) == to) || (hadPrev && same(decls[i], prev)) {
				delete(o.since, r)
				return pick{idx: i}
			}
		}
	}
	if hadPrev {
		at, ok := o.since[r]
		if !ok {
			at = now
			o.since[r] = now
		}
		if facts.changedAt != nil {
			if ch := facts.changedAt(own); ch.After(at) {
				at = ch // still being rewritten: it has not stayed so yet
			}
		}
		if now.Sub(at) < o.hold {
			return pick{idx: -1, held: true}
		}
	}
	delete(o.since, r)
	return first
}

func (o *declOwners) own(r, origin string) {
	if o.owner[r] != origin {
		o.owner[r] = origin
		o.dirty = true
	}
}

func (o *declOwners) forget(r string) {
	delete(o.since, r)
	if _, ok := o.owner[r]; ok {
		delete(o.owner, r)
		o.dirty = true
	}
}

func podDuplicate(d manifest.Desired, owner string) manifest.ManifestError {
	key := manifest.PodKey(d.Pod.Namespace, d.Pod.Name)
	e := field.Duplicate(field.NewPath("metadata", "name"), d.Pod.Name)
	e.Detail = "pod " + key + " is already declared in " + owner
	return manifest.ManifestError{Origin: d.Origin, PodKey: key, Field: e.Field, Err: e.ErrorBody()}
}

func objectDuplicate(x manifest.Object, owner string) manifest.ManifestError {
	return manifest.ManifestError{Origin: x.Origin, Kind: x.Kind, PodKey: x.Key(), Field: "metadata.name",
		Err: "Duplicate value: " + strings.ToLower(x.Kind) + " " + x.Key() + " is already declared in " + owner}
}
