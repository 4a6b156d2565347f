package app

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/gatehouse/gatehouse/backend/attest"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
)

// signingDirName is the data directory's folder of the installation's
// signing keys (backend/attest.Keyring). It is separate from every other
// key the app keeps.
const signingDirName = "signing"

const evidenceAttestUsage = `evidence attest FILE|- [--name NAME] > FILE.intoto.jsonl

Verifies the Evidence file exactly as "evidence verify" does and, only if
it holds, writes a signed in-toto attestation of it: a DSSE envelope
(payloadType application/vnd.in-toto+json) over an in-toto Statement v1
whose subject is the file (its name and the SHA-256 of its exact bytes,
plus the executable for a capture) and whose predicate is a summary of
the Evidence. It is signed with this installation's Ed25519 key, made on
first use under the data directory's signing/ folder (see "evidence key").
--name sets the subject's name (default: FILE's base name).
`

const evidenceKeyUsage = `evidence key show [--pem] | list | rotate | trust PUB.pem | untrust FINGERPRINT

show     this installation's current public key and fingerprint (made on
         first use); --pem prints the PEM alone, for "cosign --key" or
         another machine's "evidence key trust"
list     every key of this installation (current and rotated) and the
         trusted keys of others
rotate   replaces the signing key; the old public key stays listed, so
         attestations it signed still verify as this installation's
trust    trusts another installation's public key: attestations it signed
         verify as "signed by FINGERPRINT"
untrust  stops trusting a key
`

// openKeyring opens the signing keyring of the data directory named by
// io's environment (the directory is made private first, as for every
// command).
func openKeyring(io IO) (*attest.Keyring, error) {
	dir, err := DataDir(io.Getenv)
	if err != nil {
		return nil, errorf("data_dir", CategoryIO, "%v", err)
	}
	if err := EnsureDataDir(dir); err != nil {
		return nil, errorf("data_dir", CategoryIO, "%v", err)
	}
	return keyringAt(dir)
}

func keyringAt(dataDir string) (*attest.Keyring, error) {
	k, err := attest.Open(filepath.Join(dataDir, signingDirName))
	if err != nil {
		return nil, errorf("signing_key", CategoryIO, "%v", err)
	}
	return k, nil
}

// trustOf is what a verification on this installation accepts: its own
// keys, the trusted keys, and given (from --key).
func trustOf(k *attest.Keyring, given []attest.PublicKey) (attest.Trust, error) {
	own, err := k.Installation()
	if err != nil {
		return attest.Trust{}, errorf("signing_key", CategoryIO, "%v", err)
	}
	trusted, err := k.Trusted()
	if err != nil {
		return attest.Trust{}, errorf("signing_key", CategoryIO, "%v", err)
	}
	return attest.Trust{Installation: own, Trusted: trusted, Given: given}, nil
}

func runEvidenceAttest(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "evidence attest", evidenceAttestUsage)
	name := fs.String("name", "", "the subject name of the Evidence file")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("evidence attest needs exactly one FILE (or - for stdin)")
	}
	data, err := readSource(io, pos[0], MaxImportBytes+1)
	if err != nil {
		return err
	}
	env, _, issues := library.ParseVerified(data)
	if len(issues) > 0 {
		return &CLIError{Code: "invalid_evidence", Category: CategoryInvalid, Details: issues,
			Message: fmt.Sprintf("%s is not valid Evidence: %d issue(s); nothing was signed", pos[0], len(issues))}
	}
	subject := *name
	if subject == "" && pos[0] != "-" {
		subject = filepath.Base(pos[0])
	}
	k, err := openKeyring(io)
	if err != nil {
		return err
	}
	s, err := k.Signer()
	if err != nil {
		return errorf("signing_key", CategoryIO, "%v", err)
	}
	out, err := attest.Attest(ctx, s, subject, data, env)
	if err != nil {
		return errorf("attest", CategoryInternal, "%v", err)
	}
	_, err = io.Stdout.Write(out)
	return err
}

// verifyAttestationFile checks the attestation at path against the
// verified Evidence data/env; keyPath, when set, names one more key to
// accept.
func verifyAttestationFile(ctx context.Context, io IO, path, keyPath, name string, data []byte, env *evidence.Envelope) (*attest.Result, error) {
	att, err := readSource(io, path, attest.MaxAttestationBytes)
	if err != nil {
		return nil, err
	}
	var given []attest.PublicKey
	if keyPath != "" {
		pem, err := readSource(io, keyPath, 64<<10)
		if err != nil {
			return nil, err
		}
		pk, err := attest.ParsePublicKeyPEM(pem)
		if err != nil {
			return nil, &CLIError{Code: "invalid_key", Category: CategoryInvalid, Message: fmt.Sprintf("%s: %v", keyPath, err)}
		}
		given = append(given, pk)
	}
	k, err := openKeyring(io)
	if err != nil {
		return nil, err
	}
	trust, err := trustOf(k, given)
	if err != nil {
		return nil, err
	}
	res, issues := attest.Verify(ctx, att, data, env, trust)
	if len(issues) > 0 {
		details := make([]evidenceIssue, len(issues))
		for i, is := range issues {
			details[i] = evidenceIssue(is)
		}
		return nil, &CLIError{Code: "invalid_attestation", Category: CategoryInvalid, Details: details,
			Message: fmt.Sprintf("%s does not attest %s: %s", path, name, issues[0].Message)}
	}
	return &res, nil
}

func runEvidenceKey(ctx context.Context, io IO, args []string) error {
	if handled, err := subcommandHelp(io, "evidence key", evidenceKeyUsage, "show, list, rotate, trust or untrust", args); handled {
		return err
	}
	fs := newFlags(io, "evidence key "+args[0], evidenceKeyUsage)
	asPEM := fs.Bool("pem", false, "print the public key as PEM only")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	k, err := openKeyring(io)
	if err != nil {
		return err
	}
	keyErr := func(err error) error { return errorf("signing_key", CategoryIO, "%v", err) }
	switch args[0] {
	case "show":
		if len(pos) != 0 {
			return usageError("evidence key show takes no arguments")
		}
		pk, err := k.Current()
		if err != nil {
			return keyErr(err)
		}
		if *asPEM {
			_, err = io.Stdout.Write(pk.PEM())
			return err
		}
		return writeJSON(io, keyView(pk, "installation", true))
	case "list":
		if len(pos) != 0 {
			return usageError("evidence key list takes no arguments")
		}
		t, err := trustOf(k, nil)
		if err != nil {
			return err
		}
		out := map[string]any{"installation": keyViews(t.Installation, "installation"), "trusted": keyViews(t.Trusted, "trusted")}
		return writeJSON(io, out)
	case "rotate":
		if len(pos) != 0 {
			return usageError("evidence key rotate takes no arguments")
		}
		pk, err := k.Rotate()
		if err != nil {
			return keyErr(err)
		}
		return writeJSON(io, keyView(pk, "installation", true))
	case "trust":
		if len(pos) != 1 {
			return usageError("evidence key trust needs exactly one PUB.pem")
		}
		pem, err := readSource(io, pos[0], 64<<10)
		if err != nil {
			return err
		}
		pk, err := k.AddTrusted(pem)
		if err != nil {
			return &CLIError{Code: "invalid_key", Category: CategoryInvalid, Message: fmt.Sprintf("%s: %v", pos[0], err)}
		}
		return writeJSON(io, keyView(pk, "trusted", false))
	case "untrust":
		if len(pos) != 1 {
			return usageError("evidence key untrust needs exactly one FINGERPRINT")
		}
		removed, err := k.RemoveTrusted(pos[0])
		if err != nil {
			return &CLIError{Code: "invalid_arguments", Category: CategoryInvalid, Message: err.Error()}
		}
		if !removed {
			return &CLIError{Code: "key_not_found", Category: CategoryNotFound, Message: fmt.Sprintf("%s is not a trusted key", pos[0])}
		}
		return writeJSON(io, map[string]any{"untrusted": pos[0]})
	}
	return usageError("evidence key: unknown subcommand %q (show, list, rotate, trust or untrust)", args[0])
}

// SigningKeyView is a public key as the CLI and the UI show it.
type SigningKeyView struct {
	Fingerprint string `json:"fingerprint"`
	// Kind is "installation" (this installation's) or "trusted".
	Kind string `json:"kind"`
	// Current says it is the key new attestations are signed with.
	Current bool   `json:"current"`
	PEM     string `json:"pem"`
}

func keyView(pk attest.PublicKey, kind string, current bool) SigningKeyView {
	return SigningKeyView{Fingerprint: pk.Fingerprint, Kind: kind, Current: current, PEM: string(pk.PEM())}
}

func keyViews(l []attest.PublicKey, kind string) []SigningKeyView {
	out := make([]SigningKeyView, 0, len(l))
	for i, pk := range l {
		out = append(out, keyView(pk, kind, kind == "installation" && i == 0))
	}
	return out
}
