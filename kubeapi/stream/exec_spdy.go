package stream

import (
	"fmt"
	"net/http"
	"time"

	v1 "k8s.io/api/core/v1"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// spdyExecProtocols are the remotecommand versions served over SPDY, best
// first; v5 adds nothing over v4 on SPDY.
var spdyExecProtocols = []string{
	remotecommandconsts.StreamProtocolV5Name,
	remotecommandconsts.StreamProtocolV4Name,
	remotecommandconsts.StreamProtocolV3Name,
	remotecommandconsts.StreamProtocolV2Name,
}

type streamAndReply struct {
	httpstream.Stream
	replySent <-chan struct{}
}

// openSPDYExec upgrades to SPDY/3.1 and waits for the client to open the
// streams the query asks for (error, stdin, stdout, stderr, resize), as the
// kubelet does. It returns nil when the upgrade failed (answered already)
// or the streams did not come within streamCreationTimeout.
func openSPDYExec(w http.ResponseWriter, r *http.Request, q execQuery) *execSession {
	proto, err := httpstream.Handshake(r, w, spdyExecProtocols)
	if err != nil {
		return nil
	}
	streamCh := make(chan streamAndReply)
	done := make(chan struct{})
	defer close(done)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(hijackWriter{w}, r, func(st httpstream.Stream, replySent <-chan struct{}) error {
		select {
		case streamCh <- streamAndReply{st, replySent}:
			return nil
		case <-done:
			return fmt.Errorf("stream %q opened after the exec's streams were set", st.Headers().Get(v1.StreamType))
		}
	})
	if conn == nil {
		return nil
	}
	conn.SetIdleTimeout(streamIdleTimeout)
	want := 1
	for _, on := range []bool{q.stdin, q.stdout, q.stderr, q.tty && proto != remotecommandconsts.StreamProtocolV2Name} {
		if on {
			want++
		}
	}
	gone := make(chan struct{})
	go func() {
		<-conn.CloseChan()
		close(gone)
	}()
	sess := &execSession{close: conn.Close, gone: gone}
	replied := make(chan struct{}, want+4)
	expired := time.NewTimer(streamCreationTimeout)
	defer expired.Stop()
	for got := 0; got < want; {
		select {
		case st := <-streamCh:
			switch st.Headers().Get(v1.StreamType) {
			case v1.StreamTypeError:
				if proto == remotecommandconsts.StreamProtocolV2Name || proto == remotecommandconsts.StreamProtocolV3Name {
					sess.writeStatus = statusWriterV1(st)
				} else {
					sess.writeStatus = statusWriterV4(st)
				}
			case v1.StreamTypeStdin:
				sess.stdin = st
			case v1.StreamTypeStdout:
				sess.stdout = st
			case v1.StreamTypeStderr:
				sess.stderr = st
			case v1.StreamTypeResize:
				sess.resize = st
			default:
				st.Reset()
				continue
			}
			go func(sent <-chan struct{}) {
				select {
				case <-sent:
					replied <- struct{}{}
				case <-done:
				}
			}(st.replySent)
		case <-replied:
			got++
		case <-expired.C:
			conn.Close()
			return nil
		}
	}
	if sess.writeStatus == nil || (q.stdin && sess.stdin == nil) || (q.stdout && sess.stdout == nil) || (q.stderr && sess.stderr == nil) {
		conn.Close()
		return nil
	}
	return sess
}
