package pause

import "github.com/distribution/reference"

// Reserved are the repositories of the sandbox image: berth's own
// (Repository) and that of infra, the configured pod_infra_image. No pod's
// image is pulled from them, whatever its pull policy, and no pod below
// the privileged level may name them: a pull would re-tag the image that
// later sandboxes, host-network ones included, are made from. An infra
// that does not parse adds nothing (the engine refuses it too).
func Reserved(infra string) []string {
	repos := []string{Repository}
	if named, err := reference.ParseNormalizedNamed(infra); err == nil {
		if name := reference.FamiliarName(named); name != Repository {
			repos = append(repos, name)
		}
	}
	return repos
}

// ReservedRepository returns the repository of repos (familiar names, as
// Reserved returns them) that image names with any tag or digest, in any
// spelling the engine takes for it ("docker.io/berth/pause:1" is in
// "berth/pause"), and whether there is one.
func ReservedRepository(image string, repos []string) (string, bool) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", false
	}
	for _, r := range repos {
		rn, err := reference.ParseNormalizedNamed(r)
		if err == nil && rn.Name() == named.Name() {
			return r, true
		}
	}
	return "", false
}
