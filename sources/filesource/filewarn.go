package filesource

import "log/slog"

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
