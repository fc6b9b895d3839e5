package benchkit

import "net"

// FreePort returns a TCP port free on 127.0.0.1 now; another process may
// take it before the caller binds it.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
