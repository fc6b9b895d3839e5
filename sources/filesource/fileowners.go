package filesource

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

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/sources"
)

// ownersTemp is the pattern of the owners file's temporary files.
const ownersTemp = ".owners-*"

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
// rewritten, emptied for an instant, unlinked to be created again, or
// renamed, whose new name a scan has not listed yet), then let go; a file
// renamed keeps its keys under its new name. The owners are kept in the file at path (none when ""), so a restart keeps
// them too. Not safe for concurrent use: the Source's Run loop owns it.
type declOwners struct {
	path  string
	hold  time.Duration
	owner map[string]string // ref → origin
	pods  map[string]manifest.Desired
	objs  map[string]manifest.Object
	since map[string]time.Time // ref → when its owner stopped declaring it
	// listed are the files the last scan listed: a declaration equal to a
	// renamed owner's follows it only from a file new since then.
	listed map[string]bool
	// started is when the first scan settled: until hold after it, an
	// owner kept from the last run whose file is there but declares none
	// of its keys (being rewritten as berth started) is waited for.
	started time.Time
	dirty   bool
}

// fileFacts is what a scan found of the files (which are there, which were
// read, what failed) and what the watch said of them lately.
type fileFacts struct {
	present func(origin string) bool
	// listed are the files read (nil when the path is missing: the last
	// listing stands).
	listed map[string]bool
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
func isPodRef(r string) bool           { return strings.HasPrefix(r, "Pod/") }

// load reads the owners a previous run kept; a missing file is none. It
// removes the temporary files of saves a kill cut short.
func (o *declOwners) load() error {
	if o.path == "" {
		return nil
	}
	if tmps, err := filepath.Glob(filepath.Join(filepath.Dir(o.path), ownersTemp)); err == nil {
		for _, t := range tmps {
			_ = os.Remove(t)
		}
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
	tmp, err := os.CreateTemp(dir, ownersTemp)
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

// settled is what settle decided besides the update: the origins of the
// keys held (a scan after hold must decide them), and whether an owner of
// the last run is waited for (the update must not be sent yet).
type settled struct {
	held    map[string]bool
	waiting bool
}

// again reports whether a scan after hold must decide something.
func (s settled) again() bool { return len(s.held) > 0 || s.waiting }

// settle replaces u's pods and objects, every declaration of every file
// in name order, by the one kept per key, and adds an error for each
// other. Owners of keys no file claims any more are forgotten.
func (o *declOwners) settle(u *sources.Update, facts fileFacts, now time.Time) settled {
	if o.started.IsZero() {
		o.started = now
	}
	st := settled{held: map[string]bool{}}
	seen := map[string]bool{}
	var errs []manifest.ManifestError
	u.Pods, errs = settleKind(o, u.Pods, o.pods, podRef, func(d manifest.Desired) string { return d.Origin },
		func(a, b manifest.Desired) bool { return equality.Semantic.DeepEqual(a.Pod, b.Pod) }, sources.PodDuplicate, facts, now, &st, seen, isPodRef)
	u.Errors = append(u.Errors, errs...)
	u.Objects, errs = settleKind(o, u.Objects, o.objs, objRef, func(x manifest.Object) string { return x.Origin },
		sameObjectDecl, sources.ObjectDuplicate, facts, now, &st, seen, func(r string) bool { return !isPodRef(r) })
	u.Errors = append(u.Errors, errs...)
	for r := range o.owner {
		if !seen[r] {
			o.forget(r)
		}
	}
	if facts.listed != nil {
		o.listed = facts.listed
	}
	return st
}

func sameObjectDecl(a, b manifest.Object) bool {
	return a.Kind == b.Kind && equality.Semantic.DeepEqual(a.ConfigMap, b.ConfigMap) &&
		equality.Semantic.DeepEqual(a.Secret, b.Secret) && equality.Semantic.DeepEqual(a.PVC, b.PVC)
}

// settleKind is settle for one kind of declaration; last holds the kept
// declaration of each ref of that kind, and mine tells its refs among the
// owners.
func settleKind[T any](o *declOwners, items []T, last map[string]T, ref func(T) string, origin func(T) string,
	same func(a, b T) bool, duplicate func(T, string) manifest.ManifestError, facts fileFacts, now time.Time, st *settled, seen map[string]bool, mine func(ref string) bool) (kept []T, errs []manifest.ManifestError) {
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
	for r := range o.owner { // kept from the last run, declared by nobody now
		_, decl := byRef[r]
		if _, ok := last[r]; !ok && !decl && mine(r) {
			gone = append(gone, r)
		}
	}
	slices.Sort(gone)
	order = append(order, gone...)
	for _, r := range order {
		decls := byRef[r]
		prev, hadPrev := last[r]
		p := decide(o, r, decls, prev, hadPrev, origin, same, facts, now)
		seen[r] = p.idx >= 0 || p.held || p.claimed || p.waiting
		switch {
		case p.idx >= 0:
			kept = append(kept, decls[p.idx])
			o.own(r, origin(decls[p.idx]))
			last[r] = decls[p.idx]
		case p.held:
			st.held[origin(prev)] = true
			kept = append(kept, prev)
		case p.waiting:
			st.waiting = true
		case p.claimed:
			// The owner's file failed, or declares the key invalid: the
			// informer keeps its last good object, and the key stays its.
		default:
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
// owner claims the key with nothing to send), waiting (an owner of the
// last run may declare it yet), or none of them (nobody has it).
type pick struct {
	idx     int
	held    bool
	claimed bool
	waiting bool
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
	if !hadPrev && now.Sub(o.started) < o.hold {
		// An owner of the last run that does not declare its key yet
		// (being rewritten, failing, its directory being swapped, or gone
		// while berth was down) is waited for, once, before the first
		// update.
		return pick{idx: -1, waiting: true}
	}
	if facts.failed[own] || facts.invalid[own+"\x00"+r] {
		delete(o.since, r)
		return pick{idx: -1, claimed: true}
	}
	if !facts.present(own) {
		// Renamed: the key follows the file to its new name, known from
		// the watch, or else to a new file declaring what it kept.
		if to := facts.renamedTo(own); to != "" {
			for i := range decls {
				if origin(decls[i]) == to {
					delete(o.since, r)
					return pick{idx: i}
				}
			}
		}
		for i := range decls {
			if hadPrev && !o.listed[origin(decls[i])] && same(decls[i], prev) {
				delete(o.since, r)
				return pick{idx: i}
			}
		}
	}
	if hadPrev {
		// Held until the file has stayed so past hold: counted from its
		// last change the watch saw (an unlink, a move away, a write), or
		// else from the first scan that missed the key.
		at, ok := o.since[r]
		if !ok {
			at = now
			o.since[r] = now
		}
		if ch := facts.changedAt(own); !ch.IsZero() {
			at = ch
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
	delete(o.pods, r)
	delete(o.objs, r)
	if _, ok := o.owner[r]; ok {
		delete(o.owner, r)
		o.dirty = true
	}
}
