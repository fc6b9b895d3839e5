package stream

import (
	"io"
	"net/http"

	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// The WebSocket channels of an exec, by channel number.
const (
	wsStdin = iota
	wsStdout
	wsStderr
	wsError
	wsResize
)

// openWebSocketExec upgrades to one of the channel protocols (kubectl 1.37
// asks for v5.channel.k8s.io, whose 255 frame closes stdin) and returns
// the session, or nil when the handshake failed (answered already).
func openWebSocketExec(w http.ResponseWriter, r *http.Request, q execQuery) *execSession {
	chans := make([]wsstream.ChannelType, 5)
	chans[wsStdin] = pick(q.stdin, wsstream.ReadChannel)
	chans[wsStdout] = pick(q.stdout, wsstream.WriteChannel)
	chans[wsStderr] = pick(q.stderr, wsstream.WriteChannel)
	chans[wsError] = wsstream.WriteChannel
	chans[wsResize] = wsstream.ReadChannel
	bin := wsstream.ChannelProtocolConfig{Binary: true, Channels: chans}
	b64 := wsstream.ChannelProtocolConfig{Binary: false, Channels: chans}
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		"":                                      bin,
		wsstream.ChannelWebSocketProtocol:       bin,
		wsstream.Base64ChannelWebSocketProtocol: b64,
		"v4." + wsstream.ChannelWebSocketProtocol:       bin,
		"v4." + wsstream.Base64ChannelWebSocketProtocol: b64,
		remotecommandconsts.StreamProtocolV5Name:        bin,
	})
	conn.SetIdleTimeout(streamIdleTimeout)
	// wsstream logs every client's close as an error through the request's
	// logger: a discarding one keeps that out of berth's log.
	r = r.WithContext(klog.NewContext(r.Context(), klog.Logger{}))
	proto, rwc, err := conn.Open(hijackWriter{w}, r)
	if err != nil {
		return nil
	}
	// An empty frame on the lowest writable channel tells the client that
	// the streams are ready.
	switch {
	case q.stdout:
		_, _ = rwc[wsStdout].Write(nil)
	case q.stderr:
		_, _ = rwc[wsStderr].Write(nil)
	default:
		_, _ = rwc[wsError].Write(nil)
	}
	gone := make(chan struct{})
	sess := &execSession{stdin: rwc[wsStdin], stdout: rwc[wsStdout], stderr: rwc[wsStderr], close: conn.Close, gone: gone}
	// The resize channel ends only with the connection: reading it to its
	// end tells when the client went.
	resize := io.Writer(io.Discard)
	if q.tty {
		pr, pw := io.Pipe()
		sess.resize, resize = pr, pw
	}
	go func() {
		_, err := io.Copy(resize, rwc[wsResize])
		if pw, ok := resize.(*io.PipeWriter); ok {
			_ = pw.CloseWithError(err)
		}
		close(gone)
	}()
	switch proto {
	case remotecommandconsts.StreamProtocolV5Name, "v4." + wsstream.ChannelWebSocketProtocol, "v4." + wsstream.Base64ChannelWebSocketProtocol:
		sess.writeStatus = statusWriterV4(rwc[wsError])
	default:
		sess.writeStatus = statusWriterV1(rwc[wsError])
	}
	return sess
}

func pick(on bool, t wsstream.ChannelType) wsstream.ChannelType {
	if on {
		return t
	}
	return wsstream.IgnoreChannel
}
