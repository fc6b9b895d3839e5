package runtime

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types/registry"
)

// dockerHubKeys are the names Docker Hub goes by in config.json.
var dockerHubKeys = []string{"https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io"}

// Credentials are registry logins read from a Docker config.json ("auths").
// Credential helpers and stores are not consulted.
type Credentials struct {
	auths map[string]registry.AuthConfig // by registry host
}

// LoadCredentials reads the "auths" of a Docker config.json at path.
func LoadCredentials(path string) (*Credentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("registry credentials: %w", err)
	}
	c, err := ParseCredentials(b, false)
	if err != nil {
		return nil, fmt.Errorf("registry credentials %s: %w", path, err)
	}
	return c, nil
}

// ParseCredentials reads registry logins from a Docker config.json (a
// kubernetes.io/dockerconfigjson Secret's .dockerconfigjson: {"auths":
// {...}}) or, with legacy, a ~/.dockercfg (a kubernetes.io/dockercfg
// Secret's .dockercfg: the auths map itself). Errors never quote a
// password.
func ParseCredentials(b []byte, legacy bool) (*Credentials, error) {
	var auths map[string]registry.AuthConfig
	if legacy {
		if err := json.Unmarshal(b, &auths); err != nil {
			return nil, errors.New("not a dockercfg JSON object")
		}
	} else {
		var file struct {
			Auths map[string]registry.AuthConfig `json:"auths"`
		}
		if err := json.Unmarshal(b, &file); err != nil {
			return nil, errors.New("not a Docker config.json")
		}
		auths = file.Auths
	}
	c := &Credentials{auths: map[string]registry.AuthConfig{}}
	for key, a := range auths {
		if a.Auth != "" && a.Username == "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return nil, fmt.Errorf("auths[%q].auth: not base64", key)
			}
			user, pass, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("auths[%q].auth: not user:password", key)
			}
			a.Username, a.Password = user, pass
		}
		a.Auth = ""
		host := registryHost(key)
		a.ServerAddress = key
		c.auths[host] = a
	}
	return c, nil
}

// Merge returns the logins of c, then those of later for registries c has
// none for; nil when both are empty.
func (c *Credentials) Merge(later *Credentials) *Credentials {
	switch {
	case c == nil:
		return later
	case later == nil:
		return c
	}
	out := &Credentials{auths: map[string]registry.AuthConfig{}}
	for h, a := range later.auths {
		out.auths[h] = a
	}
	for h, a := range c.auths {
		out.auths[h] = a
	}
	return out
}

// registryHost normalises a config.json key ("https://host/v1/", "host").
func registryHost(key string) string {
	key = strings.TrimPrefix(strings.TrimPrefix(key, "https://"), "http://")
	key, _, _ = strings.Cut(key, "/")
	for _, k := range dockerHubKeys {
		if strings.TrimPrefix(strings.TrimSuffix(k, "/v1/"), "https://") == key {
			return "docker.io"
		}
	}
	return key
}

// For returns the login for image's registry, if any.
func (c *Credentials) For(image string) (registry.AuthConfig, bool) {
	if c == nil {
		return registry.AuthConfig{}, false
	}
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return registry.AuthConfig{}, false
	}
	a, ok := c.auths[reference.Domain(named)]
	return a, ok
}

// SetCredentials makes PullImage log in with creds (nil: anonymous).
func (d *Docker) SetCredentials(creds *Credentials) { d.creds = creds }
