package projected

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"

	"github.com/berth-dev/berth/podfs"
)

// digest identifies a projection's payload and placement.
func digest(pr podfs.Projection) string {
	h := sha256.New()
	names := make([]string, 0, len(pr.Files))
	for n := range pr.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf [8]byte
	for _, n := range names {
		f := pr.Files[n]
		binary.LittleEndian.PutUint64(buf[:], uint64(len(n)))
		h.Write(buf[:])
		h.Write([]byte(n))
		binary.LittleEndian.PutUint64(buf[:], uint64(len(f.Data)))
		h.Write(buf[:])
		h.Write(f.Data)
		binary.LittleEndian.PutUint64(buf[:], uint64(f.Mode))
		h.Write(buf[:])
	}
	if pr.Tmpfs {
		h.Write([]byte{1})
	}
	if pr.GID != nil {
		binary.LittleEndian.PutUint64(buf[:], uint64(*pr.GID))
		h.Write(buf[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}
