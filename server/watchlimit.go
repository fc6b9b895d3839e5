package server

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// watchRetryAfter is the Retry-After, in seconds, of a watch refused over
// its cap: the kube-apiserver's answer when it sheds requests, which
// client-go waits and retries on.
const watchRetryAfter = 1

// watchLimit bounds the requests clients hold open (watches and followed
// logs, see holdsOpen): at most total at once, and at most perToken for
// one token; requests with no known token count as one client. Zero is no
// cap. Safe for concurrent use.
type watchLimit struct {
	total, perToken int

	mu      sync.Mutex
	open    int
	byToken map[string]int
}

func newWatchLimit(total, perToken int) *watchLimit {
	return &watchLimit{total: total, perToken: perToken, byToken: map[string]int{}}
}

// acquire takes a slot for a request of token; refusal, when not empty,
// says which cap is reached and nothing is taken. Otherwise release gives
// the slot back and must be called exactly once.
func (l *watchLimit) acquire(token string) (release func(), refusal string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perToken > 0 && l.byToken[token] >= l.perToken {
		return nil, fmt.Sprintf("too many watches: this client holds %d open, the most one token may (server.max_watches_per_token); close one or retry later", l.perToken)
	}
	if l.total > 0 && l.open >= l.total {
		return nil, fmt.Sprintf("too many watches: %d are open, the most the node serves (server.max_watches); retry later", l.total)
	}
	l.open++
	l.byToken[token]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.open--
			if l.byToken[token]--; l.byToken[token] == 0 {
				delete(l.byToken, token)
			}
		})
	}, ""
}

// holdsOpen reports whether r stays open until its client leaves: a GET
// with ?watch= (the Kubernetes API's watches, /pods?watch=1) or ?follow=
// (followed logs) that is not explicitly false. A value that is not a
// boolean counts too: the handler refuses it at once.
func holdsOpen(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	q := r.URL.Query()
	for _, name := range []string{"watch", "follow"} {
		if vs, ok := q[name]; ok {
			if b, err := strconv.ParseBool(vs[0]); err != nil || b {
				return true
			}
		}
	}
	return false
}
