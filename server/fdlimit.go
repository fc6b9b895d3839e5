package server

// ConnectionCap is the connection cap to serve with: want, lowered to half
// the process's open-file limit when that is less (the other half stays
// with berth's sources, engine and etcd connections, and the engine
// streams of followed logs); fdLimit is that limit, 0 when unknown (want
// is then kept).
func ConnectionCap(want int) (n int, fdLimit uint64) {
	fdLimit = openFileLimit()
	if fdLimit > 0 && uint64(want) > fdLimit/2 {
		return int(max(fdLimit/2, 1)), fdLimit
	}
	return want, fdLimit
}
