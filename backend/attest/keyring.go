package attest

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
)

// File layout of a Keyring directory (the data directory's signing/):
//
//	current.key          the installation's Ed25519 private key, PKCS#8 PEM, mode 0600
//	installation/*.pub   every public key this installation has signed with (current and rotated)
//	trusted/*.pub        public keys of other installations the person trusts
//
// Public keys are PKIX "PUBLIC KEY" PEM files named by the hex form of their
// fingerprint.
const (
	currentKeyFile  = "current.key"
	installationDir = "installation"
	trustedDir      = "trusted"
	pubSuffix       = ".pub"
	// maxKeyFileBytes bounds every key file read (a PEM Ed25519 key is ~120 bytes).
	maxKeyFileBytes = 4 << 10
)

// Keyring is an installation's signing identity kept in one directory. The
// private key never enters SQLite: it lives in current.key, mode 0600, in a
// directory of mode 0700. A Keyring is safe for concurrent use in one
// process; two processes making the first key at once agree on one (the
// file is created exclusively).
type Keyring struct {
	dir string
	mu  sync.Mutex
}

// Open returns the keyring kept in dir (created with mode 0700 when
// missing). An existing dir must be a real directory closed to group and
// others; it is never "fixed". No key is made until one is needed.
func Open(dir string) (*Keyring, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("attest: keyring directory %q must be absolute", dir)
	}
	k := &Keyring{dir: filepath.Clean(dir)}
	for _, d := range []string{k.dir, filepath.Join(k.dir, installationDir), filepath.Join(k.dir, trustedDir)} {
		if err := privateDir(d); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// Dir is the keyring's directory.
func (k *Keyring) Dir() string { return k.dir }

// PrivateKeyPath is the file that holds the installation's private key.
func (k *Keyring) PrivateKeyPath() string { return filepath.Join(k.dir, currentKeyFile) }

func privateDir(d string) error {
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("attest: keyring directory: %w", err)
	}
	fi, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("attest: keyring directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("attest: keyring directory %s is not a directory (symlinks are not followed)", d)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("attest: keyring directory %s has mode %04o; it must be private: chmod 700 %s", d, fi.Mode().Perm(), d)
	}
	return checkOwner(d, fi)
}

func checkOwner(path string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("attest: %s is owned by uid %d, not by this user (uid %d)", path, st.Uid, os.Getuid())
	}
	return nil
}

// Signer returns the installation's current signing key, making it on
// first use: a fresh Ed25519 key written to current.key with mode 0600 and
// its public key listed under installation/.
func (k *Keyring) Signer() (*Signer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	priv, err := k.loadPrivate()
	if errors.Is(err, fs.ErrNotExist) {
		if err := k.create(false); err != nil {
			return nil, err
		}
		priv, err = k.loadPrivate()
	}
	if err != nil {
		return nil, err
	}
	pub, err := NewPublicKey(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return nil, err
	}
	// A key made by an older run, or by a process that stopped between
	// the two writes, is listed now.
	if err := k.writePublic(installationDir, pub); err != nil {
		return nil, err
	}
	return &Signer{priv: priv, pub: pub}, nil
}

// Current returns the installation's current public key, making the key
// pair on first use (as Signer does).
func (k *Keyring) Current() (PublicKey, error) {
	s, err := k.Signer()
	if err != nil {
		return PublicKey{}, err
	}
	return s.Public(), nil
}

// Rotate replaces the installation's signing key with a fresh one. The old
// private key is gone afterwards; its public key stays listed under
// installation/, so attestations it signed still verify as "signed by this
// installation". It returns the new public key.
func (k *Keyring) Rotate() (PublicKey, error) {
	k.mu.Lock()
	if _, err := k.loadPrivate(); err == nil {
		// Make sure the outgoing key is listed before it is replaced.
		if old, err := k.currentPublicLocked(); err == nil {
			if err := k.writePublic(installationDir, old); err != nil {
				k.mu.Unlock()
				return PublicKey{}, err
			}
		}
	}
	err := k.create(true)
	k.mu.Unlock()
	if err != nil {
		return PublicKey{}, err
	}
	return k.Current()
}

func (k *Keyring) currentPublicLocked() (PublicKey, error) {
	priv, err := k.loadPrivate()
	if err != nil {
		return PublicKey{}, err
	}
	return NewPublicKey(priv.Public().(ed25519.PublicKey))
}

// create writes a new key pair. Without replace it fails quietly when a
// key already exists (another process made it first); with replace it
// swaps the file atomically.
func (k *Keyring) create(replace bool) error {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return fmt.Errorf("attest: generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return fmt.Errorf("attest: encode private key: %w", err)
	}
	pk, err := NewPublicKey(pub)
	if err != nil {
		return err
	}
	// A rotated-in key is listed before it replaces the old one; a first
	// key is listed by Signer once it has won (a loser of a race for the
	// first key must not list a key that never signs). Either way no
	// signature exists for a key the installation does not list.
	if replace {
		if err := k.writePublic(installationDir, pk); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(k.dir, ".new-key-*")
	if err != nil {
		return fmt.Errorf("attest: write private key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("attest: write private key: %w", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return fmt.Errorf("attest: write private key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("attest: write private key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("attest: write private key: %w", err)
	}
	if replace {
		if err := os.Rename(tmp.Name(), k.PrivateKeyPath()); err != nil {
			return fmt.Errorf("attest: install private key: %w", err)
		}
		return nil
	}
	// Link fails when current.key exists: the first writer wins.
	if err := os.Link(tmp.Name(), k.PrivateKeyPath()); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("attest: install private key: %w", err)
	}
	return nil
}

// loadPrivate reads current.key, refusing a file that is not a regular
// file of this user closed to group and others (never "fixed").
func (k *Keyring) loadPrivate() (ed25519.PrivateKey, error) {
	path := k.PrivateKeyPath()
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("attest: %s is not a regular file (symlinks are not followed)", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("attest: %s has mode %04o; a private key must be readable by its owner only: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if err := checkOwner(path, fi); err != nil {
		return nil, err
	}
	data, err := readSmall(path)
	if err != nil {
		return nil, err
	}
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" || len(strings.TrimSpace(string(rest))) != 0 {
		return nil, fmt.Errorf("attest: %s is not one PEM \"PRIVATE KEY\" block", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("attest: %s: %w", path, err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("attest: %s holds a %T, not an Ed25519 key", path, key)
	}
	return priv, nil
}

func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("attest: read %s: %w", path, err)
	}
	if len(data) > maxKeyFileBytes {
		return nil, fmt.Errorf("attest: %s is larger than %d bytes; it is not a key file", path, maxKeyFileBytes)
	}
	return data, nil
}

func (k *Keyring) writePublic(sub string, pk PublicKey) error {
	path := filepath.Join(k.dir, sub, pk.fileName())
	if _, err := os.Lstat(path); err == nil {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Join(k.dir, sub), ".new-pub-*")
	if err != nil {
		return fmt.Errorf("attest: write public key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(pk.PEM())
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		return fmt.Errorf("attest: write public key: %w", errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("attest: write public key: %w", err)
	}
	return nil
}

// Installation lists every public key this installation has signed
// with: the current one first (when a key exists), then the rotated ones
// by fingerprint. It never makes a key.
func (k *Keyring) Installation() ([]PublicKey, error) {
	all, err := k.list(installationDir)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	cur, cerr := k.currentPublicLocked()
	k.mu.Unlock()
	if errors.Is(cerr, fs.ErrNotExist) {
		return all, nil
	}
	if cerr != nil {
		return nil, cerr
	}
	out := []PublicKey{cur}
	for _, p := range all {
		if p.Fingerprint != cur.Fingerprint {
			out = append(out, p)
		}
	}
	return out, nil
}

// Trusted lists the public keys of other signers the person trusts, by
// fingerprint.
func (k *Keyring) Trusted() ([]PublicKey, error) {
	return k.list(trustedDir)
}

// AddTrusted trusts the public key in pemData (one PKIX "PUBLIC KEY" PEM
// block holding an Ed25519 key) and returns it. Adding a key twice is not
// an error. A key of this installation is refused: it is trusted already.
func (k *Keyring) AddTrusted(pemData []byte) (PublicKey, error) {
	pk, err := ParsePublicKeyPEM(pemData)
	if err != nil {
		return PublicKey{}, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	own, err := k.list(installationDir)
	if err != nil {
		return PublicKey{}, err
	}
	if slices.ContainsFunc(own, func(p PublicKey) bool { return p.Fingerprint == pk.Fingerprint }) {
		return PublicKey{}, fmt.Errorf("attest: %s is a key of this installation; it needs no trust", pk.Fingerprint)
	}
	if err := k.writePublic(trustedDir, pk); err != nil {
		return PublicKey{}, err
	}
	return pk, nil
}

// RemoveTrusted stops trusting the key with fingerprint fp. It reports
// whether the key was trusted.
func (k *Keyring) RemoveTrusted(fp string) (bool, error) {
	name, ok := fileNameOf(fp)
	if !ok {
		return false, fmt.Errorf("attest: %q is not a key fingerprint (SHA256:…)", truncate(fp, 80))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	err := os.Remove(filepath.Join(k.dir, trustedDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("attest: remove trusted key: %w", err)
	}
	return true, nil
}

// list reads every *.pub of sub; a file whose name is not its key's
// fingerprint is an error (someone put it there by hand).
func (k *Keyring) list(sub string) ([]PublicKey, error) {
	entries, err := os.ReadDir(filepath.Join(k.dir, sub))
	if err != nil {
		return nil, fmt.Errorf("attest: list keys: %w", err)
	}
	var out []PublicKey
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), pubSuffix) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(k.dir, sub, e.Name())
		if !e.Type().IsRegular() {
			return nil, fmt.Errorf("attest: %s is not a regular file", path)
		}
		data, err := readSmall(path)
		if err != nil {
			return nil, err
		}
		pk, err := ParsePublicKeyPEM(data)
		if err != nil {
			return nil, fmt.Errorf("attest: %s: %w", path, err)
		}
		if pk.fileName() != e.Name() {
			return nil, fmt.Errorf("attest: %s holds key %s, not the one its name says", path, pk.Fingerprint)
		}
		out = append(out, pk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fingerprint < out[j].Fingerprint })
	return out, nil
}
