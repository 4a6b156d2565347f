package app

import (
	"context"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
)

const evidenceUsage = `evidence verify FILE|- [--attestation FILE.intoto.jsonl [--key PUB.pem]]
       evidence attest FILE|- > FILE.intoto.jsonl
       evidence key show|list|rotate|trust|untrust
       evidence list [--json]

verify  re-checks one Evidence v2 file (or stdin for "-"): the strict
        envelope and its evidence_id, and, for Process Capture Evidence
        (gatehouse.process-capture/v4), every invariant of the capture record
        in normalized_result (commitments, times, sequences, checkpoints,
        truncation, exit, event journal). Nothing is repaired. It prints a
        JSON summary and exits 0 only when everything holds; otherwise the
        structured error lists every failing path.
        With --attestation it also checks a signed in-toto attestation of
        the file (see "evidence attest"): the DSSE signature by a key of
        this installation, a trusted key ("evidence key trust") or the
        --key PEM, then that the statement's subject is this file's exact
        SHA-256 and its predicate this Evidence. The output then has
        "attestation": {fingerprint, signed_by, ...}.
`

func runEvidence(ctx context.Context, io IO, args []string) error {
	if handled, err := subcommandHelp(io, "evidence", evidenceUsage, "verify", args); handled {
		return err
	}
	switch args[0] {
	case "list":
		return runEvidenceList(ctx, io, args[1:])
	case "attest":
		return runEvidenceAttest(ctx, io, args[1:])
	case "key":
		return runEvidenceKey(ctx, io, args[1:])
	case "verify":
	default:
		return usageError("evidence: unknown subcommand %q (verify, attest, key or list)", args[0])
	}
	fs := newFlags(io, "evidence verify", evidenceUsage)
	attPath := fs.String("attestation", "", "a signed in-toto attestation of FILE to check too")
	keyPath := fs.String("key", "", "a PEM public key to accept as the attestation's signer (with --attestation)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("evidence verify needs exactly one FILE (or - for stdin)")
	}
	// One byte past the limit lets Parse report the size itself.
	data, err := readSource(io, pos[0], evidence.MaxEnvelopeBytes+1)
	if err != nil {
		return err
	}
	if *keyPath != "" && *attPath == "" {
		return usageError("evidence verify: --key needs --attestation")
	}
	if n := countStdin(pos[0], *attPath, *keyPath); n > 1 {
		return usageError("evidence verify: only one of FILE, --attestation and --key can be - (stdin)")
	}
	env, res, issues := library.ParseVerified(data)
	if len(issues) > 0 {
		return &CLIError{Code: "invalid_evidence", Category: CategoryInvalid, Details: issues,
			Message: fmt.Sprintf("%s is not valid Evidence: %d issue(s)", pos[0], len(issues))}
	}
	if *attPath != "" {
		if res.Attestation, err = verifyAttestationFile(ctx, io, *attPath, *keyPath, pos[0], data, env); err != nil {
			return err
		}
	}
	return writeJSON(io, res)
}

func countStdin(names ...string) int {
	n := 0
	for _, s := range names {
		if s == "-" {
			n++
		}
	}
	return n
}

// runEvidenceList prints the index of Evidence saved in the data directory.
func runEvidenceList(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "evidence list", "evidence list [--json]\n\nThe captures saved in the data directory, newest first.")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		return err
	}
	defer env.Close()
	list, err := env.lib().List(ctx, maxListedEvidence)
	if err != nil {
		return libError(err)
	}
	if *asJSON {
		return writeJSON(io, map[string]any{"evidence": list})
	}
	for _, e := range list {
		fmt.Fprintf(io.Stdout, "%s  %s  %s  %s\n", e.CreatedAt.Local().Format("2006-01-02 15:04:05"), e.EvidenceID, e.PredicateType, e.Summary)
	}
	return nil
}
