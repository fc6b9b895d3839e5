package sources

import (
	"fmt"
	"io/fs"

	"github.com/berth-dev/berth/manifest"
	"github.com/berth-dev/berth/model"
)

// secretFileWarning is the warning of a manifest file that declares a
// Secret (valid or not) and that group or others may read (mode & 0o044),
// naming the file; "" otherwise.
func secretFileWarning(file string, mode fs.FileMode, d manifest.Decoded) string {
	if mode.Perm()&0o044 == 0 {
		return ""
	}
	key := ""
	for _, o := range d.Objects {
		if o.Kind == model.KindSecret {
			key = o.Key()
			break
		}
	}
	for _, e := range d.Errors {
		if key == "" && e.Kind == model.KindSecret {
			key = e.PodKey
		}
	}
	if key == "" {
		return ""
	}
	return fmt.Sprintf("%s: holds secret %s and group or others may read it (mode %04o); chmod go-rwx it", file, key, mode.Perm())
}
