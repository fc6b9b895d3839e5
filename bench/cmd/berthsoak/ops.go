package main

// Operations on the pods directory as operators and config tools do them.
// Each runs with the ledger's lock held and records itself there.

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func (s *soak) path(name string) string { return filepath.Join(s.podsDir, name) }

// writeAtomic writes name through a hidden temporary file renamed over it.
func (s *soak) writeAtomic(name, content string) error {
	tmp := s.path("." + name + ".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, s.path(name))
}

// rewriteVariants are the in-place rewrites of a file with the same
// content: truncate, write, close, in three ways writers do it.
var rewriteVariants = []string{
	"trunc-write",       // open with O_TRUNC, write all, close
	"trunc-pause-write", // open with O_TRUNC, write half, 30 ms, write the rest, close
	"empty-close-write", // truncate and close (an empty file, closed), then open, write, close
}

// writeInPlace rewrites name in place, as variant says.
func (s *soak) writeInPlace(name, content, variant string) error {
	path := s.path(name)
	if variant == "empty-close-write" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	data := []byte(content)
	if variant == "trunc-pause-write" {
		half := len(data) / 2
		if _, err := f.Write(data[:half]); err != nil {
			f.Close()
			return err
		}
		time.Sleep(30 * time.Millisecond)
		data = data[half:]
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// opLog appends a line to ops.log in the work dir, to read beside
// berth's log.
func (s *soak) opLog(format string, args ...any) {
	if s.ops == nil {
		return
	}
	fmt.Fprintf(s.ops, "%s %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), fmt.Sprintf(format, args...))
}

// touch records an operation on p (caller holds led.mu); changed says its
// spec or presence changed.
func (s *soak) touch(p *podState, kind string, changed bool) {
	now := time.Now()
	s.opLog("%s %s file=%q gen=%d", kind, p.name, p.file, p.gen)
	p.lastOp, p.lastOpKind = now, kind
	if changed {
		p.lastChange = now
	}
	s.led.lastFileChange = now
	s.led.ops[kind]++
}

// opEdit changes the pod's env value, writing the file in place: the app
// container restarts (not the sandbox).
func (s *soak) opEdit(p *podState) error {
	p.gen++
	if err := s.writeInPlace(p.file, p.content(), "trunc-write"); err != nil {
		return err
	}
	s.touch(p, "edit", true)
	return nil
}

// opReplace writes the file atomically over itself, changed or not.
func (s *soak) opReplace(p *podState, change bool) error {
	kind := "replace-same"
	if change {
		p.gen++
		kind = "replace-changed"
	}
	if err := s.writeAtomic(p.file, p.content()); err != nil {
		return err
	}
	s.touch(p, kind, change)
	return nil
}

// opRewrite rewrites the file in place with the same content.
func (s *soak) opRewrite(p *podState) error {
	v := rewriteVariants[s.rng.IntN(len(rewriteVariants))]
	if err := s.writeInPlace(p.file, p.content(), v); err != nil {
		return err
	}
	s.touch(p, "rewrite/"+v, false)
	return nil
}

// opRename gives the file a new name in the same directory (rename(2));
// the pod must not restart.
func (s *soak) opRename(p *podState, n int) error {
	to := fmt.Sprintf("%s-r%d.yaml", p.name, n)
	if err := os.Rename(s.path(p.file), s.path(to)); err != nil {
		return err
	}
	s.opLog("rename %s from %q", p.name, p.file)
	p.file = to
	s.touch(p, "rename", false)
	return nil
}

// opDelete removes the file; the pod must go.
func (s *soak) opDelete(p *podState, kind string) error {
	if err := os.Remove(s.path(p.file)); err != nil {
		return err
	}
	p.file = ""
	s.touch(p, kind, true)
	return nil
}

// opAdd writes a pod file: a deleted pod again (a new generation) or a new
// pod, atomically or by a plain create and write.
func (s *soak) opAdd(p *podState, kind string) error {
	if p == nil {
		p = s.led.newPod()
	} else {
		p.gen++
		p.file = p.name + ".yaml"
		p.readds = append(p.readds, p.gen)
	}
	var err error
	if s.rng.IntN(2) == 0 {
		err = s.writeAtomic(p.file, p.content())
	} else {
		err = os.WriteFile(s.path(p.file), []byte(p.content()), 0o644)
	}
	if err != nil {
		p.file = ""
		return err
	}
	s.touch(p, kind, true)
	return nil
}

// randomOp does one operation chosen at random, keeping the number of
// declared pods within 20 % of -pods.
func (s *soak) randomOp(n int) error {
	l := s.led
	l.mu.Lock()
	defer l.mu.Unlock()
	count := l.declaredCount()
	type choice struct {
		w  int
		do func() error
	}
	var cs []choice
	if p := s.pick(declared); p != nil {
		cs = append(cs,
			choice{18, func() error { return s.opEdit(p) }},
			choice{22, func() error { return s.opReplace(p, s.rng.IntN(2) == 0) }},
			choice{18, func() error { return s.opRewrite(p) }},
			choice{18, func() error { return s.opRename(p, n) }})
		if count > s.opt.pods*8/10 {
			cs = append(cs, choice{12, func() error { return s.opDelete(p, "delete") }})
		}
	}
	if count < s.opt.pods*12/10 {
		if q := s.pick(deleted); q != nil && s.rng.IntN(2) == 0 {
			cs = append(cs, choice{12, func() error { return s.opAdd(q, "add-again") }})
		} else {
			cs = append(cs, choice{12, func() error { return s.opAdd(nil, "add-new") }})
		}
	}
	total := 0
	for _, c := range cs {
		total += c.w
	}
	if total == 0 {
		return nil
	}
	r := s.rng.IntN(total)
	for _, c := range cs {
		if r < c.w {
			return c.do()
		}
		r -= c.w
	}
	return nil
}
