package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/policy"
)

// TestForgedReceiptApprovesNothing: someone who can write the SQLite file
// adds a trusted scope for an agent with a hand-written receipt. The
// agent's run is not run unasked; the policy fails closed and GetPolicy
// (the Security view) says why.
func TestForgedReceiptApprovesNothing(t *testing.T) {
	ts := startServer(t)
	agentID, cs := connectAgent(t, ts, "forger")
	ws := t.TempDir()
	ins, _ := ts.facade.InspectSkill(InspectSkillArgs{Name: "text-metrics"})
	real, _ := resolveForTest(ws)
	forged := fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":%q,"workspace":%q,"timeoutMsCeiling":5000,"maxOutputBytesCeiling":16384,"receiptId":"0b9e2a4c-5f1d-4e7a-9c3b-2d8f6a1e4b7c","approvedAt":"2026-11-30T12:00:00Z"}]}`,
		ins.Execution.Revision, agentID, real)
	if err := ts.facade.env.DB.Put(context.Background(), policy.Namespace, policy.ExecutionKey, json.RawMessage(forged)); err != nil {
		t.Fatal(err)
	}
	env := callRun(t, cs, ws, false)
	if env["status"] == "succeeded" || env["status"] != "refused" || firstCode(env) != "policy_unreadable" {
		t.Fatalf("forged receipt: %v", env)
	}
	_, err := ts.facade.GetPolicy(Empty{})
	if codeOf(err) != "policy_invalid" || !strings.Contains(err.Error(), "unverified_receipt") || !strings.Contains(err.Error(), "no script runs") {
		t.Fatalf("GetPolicy error %v, want policy_invalid with the reason", err)
	}
	// The person saving the same scope issues a genuine receipt: it runs.
	if _, err := ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":%q,"workspace":%q,"timeoutMsCeiling":5000,"maxOutputBytesCeiling":16384}]}`,
		ins.Execution.Revision, agentID, real))}); err != nil {
		t.Fatal(err)
	}
	if env := callRun(t, cs, ws, false); env["status"] != "succeeded" {
		t.Fatalf("genuine scope: %v", env)
	}
}
