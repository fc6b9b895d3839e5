package main

// Hostile files: what a careless operator, a broken tool or an attacker
// with write access to a bad path leaves in the pods directory. None may
// reach the running set: the pods they declare never run, a duplicate of a
// declared pod never takes it over, and the pods of other files go on.

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// hostileFile is one hostile entry made in the pods directory.
type hostileFile struct {
	kind     string
	name     string // base name of the entry
	created  time.Time
	removeAt time.Time
	removed  bool
	// pod is the pod it declares that must never run ("" when none);
	// target the declared pod a duplicate names (held from the churn).
	pod, target string
	// silent: berth is expected to skip it without a word (a hidden file).
	silent     bool
	namedInLog bool
}

// hostileKind makes one hostile entry named by base (no extension),
// declaring pod where it declares one; it returns the entry's name.
type hostileKind struct {
	name string
	make func(s *soak, h *hostileFile, base, pod string) error
}

func (s *soak) writeHostile(h *hostileFile, name string, data []byte) error {
	h.name = name
	return os.WriteFile(s.path(name), data, 0o644)
}

// hostileYAML is a pod spec with extra spec lines (indented two spaces)
// and container lines (indented six).
func hostileYAML(name, image, specExtra, ctrExtra string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 1
%s  containers:
    - name: app
      image: %q
      args: ["sleep"]
%s`, name, specExtra, image, ctrExtra)
}

var hostileKinds = []hostileKind{
	{"invalid-yaml", func(s *soak, h *hostileFile, base, pod string) error {
		return s.writeHostile(h, base+".yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n  "+pod+"\n"))
	}},
	{"comment-10MB", func(s *soak, h *hostileFile, base, pod string) error {
		data := []byte("# " + strings.Repeat("x", 10_000_000-3) + "\n")
		return s.writeHostile(h, base+".yaml", data)
	}},
	{"empty", func(s *soak, h *hostileFile, base, pod string) error {
		return s.writeHostile(h, base+".yaml", nil)
	}},
	{"symlink-to-itself", func(s *soak, h *hostileFile, base, pod string) error {
		h.name = base + ".yaml"
		return os.Symlink(h.name, s.path(h.name))
	}},
	{"duplicate-sorting-first", func(s *soak, h *hostileFile, base, pod string) error {
		return s.duplicate(h, "00-dup-")
	}},
	{"privileged", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".yaml", []byte(hostileYAML(pod, testImage, "",
			"      securityContext:\n        privileged: true\n")))
	}},
	{"directory", func(s *soak, h *hostileFile, base, pod string) error {
		h.name, h.pod = base+".yaml", pod
		if err := os.Mkdir(s.path(h.name), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(s.path(h.name), "pod.yaml"), []byte(hostileYAML(pod, testImage, "", "")), 0o644)
	}},
	{"oversize-11MiB", func(s *soak, h *hostileFile, base, pod string) error {
		data := []byte(hostileYAML(pod, testImage, "", "") + "# " + strings.Repeat("x", 11<<20) + "\n")
		h.pod = pod
		return s.writeHostile(h, base+".yaml", data)
	}},
	{"duplicate-sorting-after", func(s *soak, h *hostileFile, base, pod string) error {
		return s.duplicate(h, "zz-dup-")
	}},
	{"host-network", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".yaml", []byte(hostileYAML(pod, testImage, "  hostNetwork: true\n", "")))
	}},
	{"host-path", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".yaml", []byte(hostileYAML(pod, testImage,
			"  volumes:\n    - name: root\n      hostPath: {path: /}\n",
			"      volumeMounts:\n        - {name: root, mountPath: /host}\n")))
	}},
	{"pause-image", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".yaml", []byte(hostileYAML(pod, "berth/pause:latest", "", "")))
	}},
	{"invalid-name", func(s *soak, h *hostileFile, base, pod string) error {
		return s.writeHostile(h, base+".yaml", []byte(hostileYAML("Bad_Name."+pod, testImage, "", "")))
	}},
	{"no-containers", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: "+pod+"\nspec: {}\n"))
	}},
	{"wrong-type", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: "+pod+"\nspec:\n  containers: \"app\"\n"))
	}},
	{"binary", func(s *soak, h *hostileFile, base, pod string) error {
		data := make([]byte, 4096)
		_, _ = rand.Read(data)
		return s.writeHostile(h, base+".yaml", data)
	}},
	{"truncated-json", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".json", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"`+pod+`"},"spec":{"containers":[{"name":"app","image":"`+testImage+`"`))
	}},
	{"other-kind", func(s *soak, h *hostileFile, base, pod string) error {
		return s.writeHostile(h, base+".yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: "+pod+"\nspec:\n  replicas: 3\n"))
	}},
	{"swap-file", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod = pod
		return s.writeHostile(h, base+".yaml.swp", []byte(hostileYAML(pod, testImage, "", "")))
	}},
	{"fifo", func(s *soak, h *hostileFile, base, pod string) error {
		h.name = base + ".yaml"
		return syscall.Mkfifo(s.path(h.name), 0o644)
	}},
	{"yaml-alias-bomb", func(s *soak, h *hostileFile, base, pod string) error {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + pod + "\n  annotations:\n")
		b.WriteString(`    a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
		for i := 1; i < 9; i++ {
			fmt.Fprintf(&b, "    a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
		}
		b.WriteString("spec:\n  containers:\n    - name: app\n      image: \"" + testImage + "\"\n")
		h.pod = pod
		return s.writeHostile(h, base+".yaml", []byte(b.String()))
	}},
	{"dangling-symlink", func(s *soak, h *hostileFile, base, pod string) error {
		h.name = base + ".yaml"
		return os.Symlink("/nonexistent/"+base+".yaml", s.path(h.name))
	}},
	{"hidden-file", func(s *soak, h *hostileFile, base, pod string) error {
		h.pod, h.silent = pod, true
		return s.writeHostile(h, "."+base+".yaml", []byte(hostileYAML(pod, testImage, "", "")))
	}},
}

// duplicate writes a file declaring a pod another file already declares,
// with another spec (SOAK_GEN "intruder"), named prefix + that file's name.
// The target is held from the churn while the duplicate stays, so the
// original declaration stays the only rightful one.
func (s *soak) duplicate(h *hostileFile, prefix string) error {
	p := s.pick(declared)
	if p == nil {
		return fmt.Errorf("no declared pod to duplicate")
	}
	p.hold = true
	h.target = p.name
	return s.writeHostile(h, prefix+p.file, []byte(podYAML(p.name, p.grace, intruderGen)))
}

// intruderGen is the SOAK_GEN of a duplicate's spec.
const intruderGen = "intruder"

// hostileOp makes the j-th hostile entry (kinds in turn).
func (s *soak) hostileOp(j int) error {
	k := hostileKinds[j%len(hostileKinds)]
	base := fmt.Sprintf("h%02d-%s", j, strings.ToLower(k.name))
	h := &hostileFile{kind: k.name}
	pod := fmt.Sprintf("%s-x%02d", s.prefix, j)
	s.led.mu.Lock()
	defer s.led.mu.Unlock()
	err := k.make(s, h, base, pod)
	now := time.Now()
	h.created, h.removeAt = now, now.Add(s.opt.hostileLife)
	s.led.lastFileChange = now
	s.led.ops["hostile"]++
	s.res.hostile = append(s.res.hostile, h)
	if err != nil {
		h.removed = true
		return fmt.Errorf("hostile %s: %w", k.name, err)
	}
	logf("hostile file %s (%s)", h.name, k.name)
	s.opLog("hostile %s %q target=%q", k.name, h.name, h.target)
	return nil
}

// removeHostile removes the hostile entries due (all when all is set).
func (s *soak) removeHostile(all bool) {
	s.led.mu.Lock()
	defer s.led.mu.Unlock()
	now := time.Now()
	for _, h := range s.res.hostile {
		if h.removed || h.name == "" || (!all && now.Before(h.removeAt)) {
			continue
		}
		if err := os.RemoveAll(s.path(h.name)); err != nil {
			logf("remove hostile %s: %v", h.name, err)
		}
		h.removed = true
		s.led.lastFileChange = time.Now()
		s.opLog("hostile removed %q", h.name)
		if p := s.led.pods[h.target]; p != nil {
			p.hold = false
		}
	}
}

// hostilePod reports whether pod is one a hostile file declared.
func (s *soak) hostilePod(pod string) bool {
	return strings.HasPrefix(pod, s.prefix+"-x") || strings.Contains(pod, "."+s.prefix+"-x")
}
