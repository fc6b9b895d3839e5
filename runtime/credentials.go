package runtime

import (
	"encoding/base64"
	"encoding/json"
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
	var file struct {
		Auths map[string]registry.AuthConfig `json:"auths"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("registry credentials %s: %w", path, err)
	}
	c := &Credentials{auths: map[string]registry.AuthConfig{}}
	for key, a := range file.Auths {
		if a.Auth != "" && a.Username == "" {
			raw, err := base64.StdEncoding.DecodeString(a.Auth)
			if err != nil {
				return nil, fmt.Errorf("registry credentials %s: auths[%q].auth: %w", path, key, err)
			}
			user, pass, ok := strings.Cut(string(raw), ":")
			if !ok {
				return nil, fmt.Errorf("registry credentials %s: auths[%q].auth: not user:password", path, key)
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
