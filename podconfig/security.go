package podconfig

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/berth-dev/berth/runtime"
)

// effectiveSecurityContext is the container's securityContext with the
// pod's defaults filled in, as the kubelet's
// DetermineEffectiveSecurityContext: the container's own field wins.
func effectiveSecurityContext(pod *v1.Pod, ctr *v1.Container) *v1.SecurityContext {
	sc := &v1.SecurityContext{}
	if ctr.SecurityContext != nil {
		sc = ctr.SecurityContext.DeepCopy()
	}
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return sc
	}
	if sc.SELinuxOptions == nil && psc.SELinuxOptions != nil {
		sc.SELinuxOptions = psc.SELinuxOptions.DeepCopy()
	}
	if sc.RunAsUser == nil {
		sc.RunAsUser = psc.RunAsUser
	}
	if sc.RunAsGroup == nil {
		sc.RunAsGroup = psc.RunAsGroup
	}
	if sc.RunAsNonRoot == nil {
		sc.RunAsNonRoot = psc.RunAsNonRoot
	}
	if sc.SeccompProfile == nil && psc.SeccompProfile != nil {
		sc.SeccompProfile = psc.SeccompProfile.DeepCopy()
	}
	if sc.AppArmorProfile == nil && psc.AppArmorProfile != nil {
		sc.AppArmorProfile = psc.AppArmorProfile.DeepCopy()
	}
	return sc
}

// applySecurity sets cfg's user, groups and security options from the
// effective securityContext; image is the container's image, whose user
// decides runAsNonRoot and a group given without a user.
func (b *Builder) applySecurity(cfg *runtime.ContainerConfig, pod *v1.Pod, ctr *v1.Container, image runtime.ImageInfo) error {
	sc := effectiveSecurityContext(pod, ctr)
	imageUser, _, _ := strings.Cut(image.User, ":")
	switch {
	case sc.RunAsUser != nil:
		cfg.User = strconv.FormatInt(*sc.RunAsUser, 10)
	case sc.RunAsGroup != nil && imageUser == "":
		cfg.User = "0"
	case sc.RunAsGroup != nil:
		cfg.User = imageUser
	}
	if sc.RunAsGroup != nil {
		cfg.User += ":" + strconv.FormatInt(*sc.RunAsGroup, 10)
	}
	if sc.RunAsNonRoot != nil && *sc.RunAsNonRoot {
		if err := verifyNonRoot(pod, ctr, sc, imageUser); err != nil {
			return err
		}
	}
	if psc := pod.Spec.SecurityContext; psc != nil {
		if psc.FSGroup != nil {
			cfg.GroupAdd = append(cfg.GroupAdd, strconv.FormatInt(*psc.FSGroup, 10))
		}
		for _, g := range psc.SupplementalGroups {
			cfg.GroupAdd = append(cfg.GroupAdd, strconv.FormatInt(g, 10))
		}
	}
	if sc.Privileged != nil {
		cfg.Privileged = *sc.Privileged
	}
	if sc.ReadOnlyRootFilesystem != nil {
		cfg.ReadonlyRootfs = *sc.ReadOnlyRootFilesystem
	}
	if caps := sc.Capabilities; caps != nil {
		for _, cp := range caps.Add {
			cfg.CapAdd = append(cfg.CapAdd, string(cp))
		}
		for _, cp := range caps.Drop {
			cfg.CapDrop = append(cfg.CapDrop, string(cp))
		}
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		cfg.SecurityOpt = append(cfg.SecurityOpt, "no-new-privileges:true")
	}
	if sc.ProcMount != nil && *sc.ProcMount == v1.UnmaskedProcMount {
		cfg.UnmaskProc = true
	}
	if se := sc.SELinuxOptions; se != nil {
		for _, l := range [][2]string{{"user", se.User}, {"role", se.Role}, {"type", se.Type}, {"level", se.Level}} {
			if l[1] != "" {
				cfg.SecurityOpt = append(cfg.SecurityOpt, "label="+l[0]+":"+l[1])
			}
		}
	}
	seccomp, err := b.seccompOpt(sc.SeccompProfile)
	if err != nil {
		return err
	}
	if seccomp != "" {
		cfg.SecurityOpt = append(cfg.SecurityOpt, seccomp)
	}
	if ap := sc.AppArmorProfile; ap != nil {
		switch ap.Type {
		case v1.AppArmorProfileTypeUnconfined:
			cfg.SecurityOpt = append(cfg.SecurityOpt, "apparmor=unconfined")
		case v1.AppArmorProfileTypeLocalhost:
			if ap.LocalhostProfile != nil {
				cfg.SecurityOpt = append(cfg.SecurityOpt, "apparmor="+*ap.LocalhostProfile)
			}
		}
	}
	return nil
}

// verifyNonRoot refuses a container that would run as uid 0, with the
// kubelet's messages (kuberuntime verifyRunAsNonRoot).
func verifyNonRoot(pod *v1.Pod, ctr *v1.Container, sc *v1.SecurityContext, imageUser string) error {
	who := fmt.Sprintf("(pod: %q, container: %s)", pod.Name+"_"+pod.Namespace+"("+string(pod.UID)+")", ctr.Name)
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy %s", who)
		}
		return nil
	}
	if imageUser == "" {
		return fmt.Errorf("container has runAsNonRoot and image will run as root %s", who)
	}
	uid, err := strconv.ParseInt(imageUser, 10, 64)
	if err != nil {
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root %s", imageUser, who)
	}
	if uid == 0 {
		return fmt.Errorf("container has runAsNonRoot and image will run as root %s", who)
	}
	return nil
}

// seccompOpt is the engine option for a seccomp profile: none for the
// runtime's default (also when unset, as a kubelet with --seccomp-default),
// "seccomp=unconfined", or a Localhost profile's JSON read from
// root_dir/seccomp (the kubelet's seccomp root).
func (b *Builder) seccompOpt(p *v1.SeccompProfile) (string, error) {
	if p == nil {
		return "", nil
	}
	switch p.Type {
	case v1.SeccompProfileTypeUnconfined:
		return "seccomp=unconfined", nil
	case v1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil {
			return "", fmt.Errorf("seccomp profile Localhost without localhostProfile")
		}
		prof, err := b.paths.SeccompProfile(*p.LocalhostProfile)
		if err != nil {
			return "", fmt.Errorf("seccomp profile: %w", err)
		}
		return "seccomp=" + string(prof), nil
	}
	return "", nil
}
