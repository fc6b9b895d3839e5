package servingcert

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// maxFile bounds what is read of either file.
const maxFile = 1 << 20

// pkiDir is the open directory of the pair; every file is opened relative
// to it without following links.
type pkiDir struct {
	path string
	fd   int
}

// openDir opens path, created 0700 if missing and made 0700 if not; a
// symbolic link or a non-directory is an error.
func openDir(path string) (*pkiDir, error) {
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("serving certificate directory: %w", err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("serving certificate directory %s is a symbolic link: berth keeps its serving key there and follows no link; remove it", path)
		}
		return nil, fmt.Errorf("serving certificate directory %s is not a directory", path)
	}
	if err != nil {
		return nil, fmt.Errorf("serving certificate directory %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("serving certificate directory %s: %w", path, err)
	}
	if st.Mode&0o7777 != 0o700 {
		if err := unix.Fchmod(fd, 0o700); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("serving certificate directory %s: chmod 0700: %w", path, err)
		}
	}
	return &pkiDir{path: path, fd: fd}, nil
}

func (d *pkiDir) close() { unix.Close(d.fd) }

// check returns the certificate of a fit pair, or why the pair is unfit.
func (d *pkiDir) check(sans SANs, now time.Time) (*x509.Certificate, string) {
	certPEM, reason := d.read(CertName, 0)
	if reason != "" {
		return nil, reason
	}
	keyPEM, reason := d.read(KeyName, 0o600)
	if reason != "" {
		return nil, reason
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Sprintf("%s and %s are not a pair: %v", CertName, KeyName, err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Sprintf("%s: %v", CertName, err)
		}
	}
	switch {
	case leaf.CheckSignatureFrom(leaf) != nil:
		return nil, CertName + " is not a self-signed CA certificate"
	case now.Before(leaf.NotBefore):
		return nil, fmt.Sprintf("%s is not valid before %s", CertName, leaf.NotBefore.UTC().Format(time.RFC3339))
	case now.Add(MinRemaining).After(leaf.NotAfter):
		return nil, fmt.Sprintf("%s expires at %s, in less than %s", CertName, leaf.NotAfter.UTC().Format(time.RFC3339), MinRemaining)
	}
	if m := sans.missing(leaf); m != "" {
		return nil, fmt.Sprintf("%s does not cover %s", CertName, m)
	}
	return leaf, ""
}

// read returns the regular file name of the directory, or why it cannot
// be used: missing, a link (not followed), not regular, or with mode
// bits beyond maxMode (0: any mode).
func (d *pkiDir) read(name string, maxMode uint32) ([]byte, string) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, "no " + name + " yet"
	case errors.Is(err, unix.ELOOP):
		return nil, name + " is a symbolic link (not followed)"
	case err != nil:
		return nil, fmt.Sprintf("%s: %v", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, fmt.Sprintf("%s: %v", name, err)
	case !fi.Mode().IsRegular():
		return nil, name + " is not a regular file"
	case maxMode != 0 && uint32(fi.Mode().Perm())&^maxMode != 0:
		return nil, fmt.Sprintf("%s has mode %04o, wider than %04o", name, fi.Mode().Perm(), maxMode)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", name, err)
	}
	return b, ""
}

// replace writes data to a new file of the directory (exclusive create,
// mode perm) and renames it to name, replacing whatever name was (a link
// itself, never its target).
func (d *pkiDir) replace(name string, data []byte, perm uint32) error {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return err
	}
	tmp := "." + name + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(d.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		return fmt.Errorf("serving certificate: create %s in %s: %w", tmp, d.path, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(os.FileMode(perm)) // exactly perm, whatever the umask
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(d.fd, tmp, d.fd, name)
	}
	if err != nil {
		_ = unix.Unlinkat(d.fd, tmp, 0)
		return fmt.Errorf("serving certificate: write %s in %s: %w", name, d.path, err)
	}
	return nil
}

// sync makes the renames durable.
func (d *pkiDir) sync() error {
	if err := unix.Fsync(d.fd); err != nil {
		return fmt.Errorf("serving certificate directory %s: %w", d.path, err)
	}
	return nil
}
