package sources

import (
	"fmt"
	"io/fs"
	"log/slog"

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

// fileWarning is a file's own warning, with the file's identity.
type fileWarning struct {
	file string
	id   fileID
	msg  string
}

// fileWarnLog logs each file's warning once per version of the file: again
// only when the file changed (its identity did) or after a scan without
// the warning.
type fileWarnLog map[string]fileID

func (l *fileWarnLog) log(log *slog.Logger, warns []fileWarning) {
	next := make(fileWarnLog, len(warns))
	for _, w := range warns {
		if old, ok := (*l)[w.file]; !ok || old != w.id {
			log.Warn(w.msg)
		}
		next[w.file] = w.id
	}
	*l = next
}
