package app

import (
	"context"
	"errors"
	"fmt"
	iopkg "io"
	"os"

	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/runner"
)

const policyUsage = `policy get [--json] | policy set FILE|-

get prints the skill execution policy (mode, safe mode, trusted scopes with
their receipts). set replaces it with the JSON in FILE (or stdin): the whole
value is validated first and rejected with field paths if anything is wrong,
receipts are issued by Gatehouse (submitted ones are ignored), and the stored
value is printed.`

func runPolicy(ctx context.Context, io IO, args []string) error {
	cmd, err := openVerbCommand(ctx, io, "policy", policyUsage, "get or set", args, nil)
	if cmd == nil {
		return err
	}
	env, pos, asJSON := cmd.env, cmd.pos, cmd.asJSON
	defer env.Close()
	st := env.PolicyStore()
	switch {
	case args[0] == "get" && len(pos) == 0:
		p, err := st.Get(ctx)
		if err != nil {
			return errorf("policy", CategoryIO, "%v", err)
		}
		return printPolicy(io, p, asJSON)
	case args[0] == "set" && len(pos) == 1:
		data, err := readSource(io, pos[0], 1<<20)
		if err != nil {
			return err
		}
		p, err := st.Set(ctx, data)
		var ve *policy.ValidationError
		if errors.As(err, &ve) {
			return &CLIError{Code: "invalid_policy", Category: CategoryInvalid, Message: ve.Error(), Details: ve.Fields}
		}
		if err != nil {
			return errorf("policy", CategoryIO, "%v", err)
		}
		// Trusted scopes record the confinement they were approved under.
		if _, err := withRunner(ctx, env, func(rn *runner.Runner) (struct{}, error) {
			return struct{}{}, recordScopeConfinement(ctx, env, rn, p)
		}); err != nil {
			return errorf("policy", CategoryIO, "%v", err)
		}
		return printPolicy(io, p, true)
	}
	return usageError("expected: gatehouse " + policyUsage)
}

func printPolicy(io IO, p policy.Execution, asJSON bool) error {
	if asJSON {
		return writeJSON(io, p)
	}
	fmt.Fprintf(io.Stdout, "mode       %s\nsafe mode  %v\n", p.Mode, p.SafeMode)
	if len(p.Trusted) == 0 {
		fmt.Fprintln(io.Stdout, "trusted    (none)")
	}
	for _, s := range p.Trusted {
		receipt := "draft (saved outside trusted_revisions mode; not in force)"
		if s.Approved() {
			receipt = fmt.Sprintf("receipt %s, approved %s", *s.ReceiptID, s.ApprovedAt.Format("2006-01-02 15:04:05Z"))
		}
		fmt.Fprintf(io.Stdout, "trusted    %s agent=%s workspace=%s ceilings=%d ms/%d bytes\n           %s\n",
			s.Revision, visibleLine(s.AgentID), visibleLine(s.Workspace), s.TimeoutMsCeiling, s.MaxOutputBytesCeiling, receipt)
	}
	return nil
}

// readSource reads FILE, or stdin for "-", refusing more than max bytes.
func readSource(io IO, name string, max int64) ([]byte, error) {
	var r iopkg.Reader = io.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, errorf("input", CategoryIO, "%v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := iopkg.ReadAll(iopkg.LimitReader(r, max+1))
	if err != nil {
		return nil, errorf("input", CategoryIO, "%v", err)
	}
	if int64(len(b)) > max {
		return nil, errorf("input_too_large", CategoryInvalid, "%s is larger than %d bytes", name, max)
	}
	return b, nil
}
