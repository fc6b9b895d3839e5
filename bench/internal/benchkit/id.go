package benchkit

import (
	"crypto/rand"
	"encoding/hex"
)

// RandHex returns n random bytes as 2n hex digits, for run ids and names
// unique per invocation.
func RandHex(n int) string {
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	return hex.EncodeToString(buf)
}
