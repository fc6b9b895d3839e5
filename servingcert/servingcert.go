// Package servingcert keeps berth's self-signed serving certificate, as the
// kubelet self-signs kubelet.crt when given no certificate: Ensure reuses
// the pair in a directory while it is fit, and writes a new one otherwise.
// The certificate is its own CA, so a client may trust it as its root.
package servingcert

import (
	"path/filepath"
	"time"

	"k8s.io/utils/clock"
)

// The pair's file names in the directory, and its lifetimes.
const (
	CertName = "berth-serving.crt"
	KeyName  = "berth-serving.key"
	// Validity is how long a new certificate is valid.
	Validity = 365 * 24 * time.Hour
	// MinRemaining is the validity a certificate must have left to be reused.
	MinRemaining = 30 * 24 * time.Hour
)

// Files are the certificate and key paths in dir.
func Files(dir string) (cert, key string) {
	return filepath.Join(dir, CertName), filepath.Join(dir, KeyName)
}

// Options say where the pair lives and what it must cover.
type Options struct {
	// Dir holds the pair: created 0700 if missing; a symbolic link there is
	// refused, a link at either file is replaced, never followed.
	Dir string
	// Name is the subject's common name (before "@" and the creation time).
	Name  string
	SANs  SANs
	Clock clock.PassiveClock
}

// Result is the pair Ensure leaves in the directory.
type Result struct {
	CertFile, KeyFile string
	NotAfter          time.Time
	// Generated is why a new pair was written: the old one was missing or
	// unfit ("" when the pair was reused).
	Generated string
}

// Ensure returns the pair in o.Dir if it parses, the key matches, the
// certificate is self-signed, covers o.SANs and is valid for at least
// MinRemaining more; otherwise it writes a new pair (key 0600, each file
// by an exclusive create and a rename) and says why.
func Ensure(o Options) (Result, error) {
	dir, err := openDir(o.Dir)
	if err != nil {
		return Result{}, err
	}
	defer dir.close()
	now := o.Clock.Now()
	res := Result{}
	res.CertFile, res.KeyFile = Files(o.Dir)
	leaf, reason := dir.check(o.SANs, now)
	if reason == "" {
		res.NotAfter = leaf.NotAfter
		return res, nil
	}
	certPEM, keyPEM, notAfter, err := generate(o.Name, o.SANs, now)
	if err != nil {
		return Result{}, err
	}
	// The key first: a crash between the renames leaves a pair that does
	// not match, which the next start replaces.
	if err := dir.replace(KeyName, keyPEM, 0o600); err != nil {
		return Result{}, err
	}
	if err := dir.replace(CertName, certPEM, 0o644); err != nil {
		return Result{}, err
	}
	if err := dir.sync(); err != nil {
		return Result{}, err
	}
	res.NotAfter, res.Generated = notAfter, reason
	return res, nil
}
