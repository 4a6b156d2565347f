// Types of the app facade API, transcribed from docs/api.md. JSON field
// names are exactly as written there (the facade mixes camelCase and
// snake_case; do not "fix" either here).

/** A JSON Schema document (the bounded subset Gatehouse accepts). */
export type JSONSchema = { [key: string]: unknown };

export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };

export interface Issue {
  code: string;
  path: string;
  message: string;
}

// ---- skills -------------------------------------------------------------

export interface Shadowed {
  root: { path: string; origin: string };
  kind: string;
  file: string;
}

export interface SkillSummary {
  name: string;
  kind: 'folder' | 'flat';
  root: string;
  root_origin: string;
  valid: boolean;
  description: string;
  warnings: number;
  execution: { available: boolean; reason?: string; revision?: string; issues: number };
  shadowed?: Shadowed[];
}

export interface RootStatus {
  path: string;
  origin: string;
  skills: number;
  error?: string;
}

export interface Manifest {
  schemaVersion: number;
  entrypoint: string;
  files: string[];
  inputSchema: JSONSchema;
  outputSchema: JSONSchema;
  timeoutMs: number;
  maxOutputBytes: number;
}

export interface Execution {
  available: boolean;
  reason?: string;
  revision?: string;
  manifest?: Manifest;
  issues: Issue[];
  unsupported: string[];
  /** InspectSkill only: the bundle's assets/example-input.json when it is a valid input (docs/formats/execution-json.md, "Example input"). */
  exampleInput?: { path: string; text: string };
  /** InspectSkill only: why a shipped example input is not offered. */
  exampleInputProblem?: string;
}

export interface Frontmatter {
  name?: string;
  description?: string;
  license?: string;
  compatibility?: string;
  metadata?: { [k: string]: string };
  allowed_tools?: string[];
  raw: string;
}

export interface UnknownField {
  key: string;
  raw: string;
  note: string;
}

export interface Resource {
  path: string;
  kind: string;
  size: number;
}

export interface SkillInspection {
  name: string;
  kind: string;
  root: string;
  root_origin: string;
  dir?: string;
  file: string;
  valid: boolean;
  errors: Issue[];
  warnings: Issue[];
  frontmatter: Frontmatter;
  unknown_fields: UnknownField[];
  resources: Resource[];
  resource_issues: Issue[];
  shadowed: Shadowed[];
  execution: Execution;
  /** The SKILL.md Markdown body (InspectSkill adds it). */
  body: string;
}

// ---- consent ------------------------------------------------------------

export type ProposalState =
  | 'pending'
  | 'approved'
  | 'denied'
  | 'consumed'
  | 'expired'
  | 'stale'
  | 'binding_changed'
  | 'policy_refused'
  | 'cancelled';

export interface RuntimeInfo {
  path: string;
  version: string;
}

export interface ProposalView {
  id: string;
  runId: string;
  state: ProposalState;
  createdAt: string;
  expiresAt: string;
  agent: { id: string; name: string };
  skill: string;
  skillRoot: string;
  revision: string;
  files: { path: string; size: number }[];
  entrypoint: string;
  runtime: RuntimeInfo;
  workspace: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Pretty-printed exact invocation JSON. */
  invocation: string;
  warning: string;
  /** The skill's description (untrusted bundle text). */
  description: string;
  /** How this revision relates to the ones the person approved. */
  approval: ApprovalView;
}

/** The backend's comparison of a proposal's revision with the approved ones. */
export interface ApprovalView {
  status: 'new' | 'same' | 'changed' | 'unknown';
  approvedRevision?: string;
  approvedAt?: string;
  changes: { path: string; kind: 'added' | 'removed' | 'modified' }[];
  error?: string;
}

/** One revision of a snapshot file, as the consent dialog shows it. */
export interface FileContent {
  size: number;
  sha256: string;
  binary: boolean;
  truncated: boolean;
  text: string;
}

export interface ProposalFileResult {
  path: string;
  change: '' | 'added' | 'modified' | 'removed';
  current: FileContent | null;
  previous: FileContent | null;
  previousNote?: string;
}

export type PlanState = 'pending' | 'approved' | 'denied' | 'expired' | 'stale' | 'cancelled';

export interface PlanStep {
  skill: string;
  skillRoot: string;
  revision: string;
  entrypoint: string;
  files: { path: string; size: number }[];
  workspace: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Pretty-printed exact invocation JSON. */
  invocation: string;
  consumed: boolean;
}

/** A workflow plan raised by an agent's propose_workflow call. */
export interface PlanView {
  id: string;
  runId: string;
  state: PlanState;
  createdAt: string;
  expiresAt: string;
  agent: { id: string; name: string };
  steps: PlanStep[];
  warning: string;
}

export type GrantState = 'pending' | 'approved' | 'denied' | 'consumed' | 'expired' | 'cancelled';
export type GrantScope = 'once' | 'session';

/** A capture grant asked for by an MCP connection when auto-grant is off. */
export interface GrantView {
  id: string;
  runId: string;
  state: GrantState;
  scope?: GrantScope;
  uses: number;
  createdAt: string;
  expiresAt: string;
  agent: { id: string; name: string };
  request: { executable: string; workingDir: string; envNames: string[]; filesystemRoots: string[]; externalNetwork: boolean };
  command: string[];
  warning: string;
}

// ---- runs ---------------------------------------------------------------

export type RunStatus = 'succeeded' | 'failed' | 'timeout' | 'cancelled' | 'output_limit' | 'cleanup_failed' | 'refused';

export interface Progress {
  completed: number;
  total?: number;
  message?: string;
}

export interface Envelope {
  status: RunStatus;
  runId: string;
  attemptId: string;
  revision: string;
  runtime: RuntimeInfo;
  elapsedMs: number;
  exitCode: number | null;
  signal: string | null;
  output?: JSONValue;
  errors: Issue[];
  cleanup: { verified: boolean; mechanism: string; reason: string | null; signalled: number } | null;
  confinement?: ConfinementReport | null;
  stderrBytes: number;
  progress?: { completed: number; total?: number; lines: number; dropped: number };
  execution_receiver: string;
}

export interface RunRecord {
  attempt_id: string;
  run_id: string;
  skill: string;
  revision: string;
  agent: string;
  authorized_by: string;
  status: RunStatus | string;
  envelope: Envelope;
  stderr: string;
  started_at: string;
  finished_at: string;
  elapsed_ms: number;
}

export interface ActiveRun {
  runId: string;
  skill: string;
  agent: string;
  state: 'waiting' | 'running';
  startedAt: string;
  progress?: Progress;
}

export type RunEventType =
  | 'proposed'
  | 'decided'
  | 'consumed'
  | 'staged'
  | 'spawned'
  | 'progress'
  | 'exited'
  | 'cleaned'
  | 'validated'
  | 'completed';

export interface RunEvent {
  type: RunEventType | string;
  runId: string;
  attemptId: string;
  agent: string;
  skill: string;
  revision: string;
  at: string;
  execution_receiver: string;
  /** `progress`: Progress; `completed`: {status}; other types: free-form. */
  detail?: unknown;
}

export interface StoredEvent {
  seq: number;
  run_id: string;
  attempt_id: string;
  type: string;
  at: string;
  event: RunEvent;
}

// ---- settings -----------------------------------------------------------

export type PolicyMode = 'ask' | 'blocked' | 'workflow' | 'trusted_revisions';

export interface Scope {
  revision: string;
  agentId: string;
  workspace: string;
  timeoutMsCeiling: number;
  maxOutputBytesCeiling: number;
  receiptId: string | null;
  approvedAt: string | null;
}

export interface Policy {
  mode: PolicyMode;
  safeMode: boolean;
  trusted: Scope[];
}

export interface Agent {
  id: string;
  name: string;
  can_execute_skills: boolean;
  disabled: boolean;
  built_in: boolean;
  created_at?: string;
}

export interface Pin {
  path: string;
  version: string;
  sha256: string;
  pinned_at: string;
}

export interface CaptureSettings {
  enabled: boolean;
  executableRoots: string[];
  workingRoots: string[];
  allowedEnv: string[];
  allowExternalNetwork: boolean;
  autoGrant: boolean;
}

/** Field error of SetPolicy (`invalid_policy`) and SetSkillRoots (`invalid_roots`). */
/** How an MCP client reaches Gatehouse as one agent: the snippets `gatehouse agent add` prints (backend/agents.Connection). */
export interface AgentConnection {
  url: string;
  mcpJson: string;
  claudeHttp: string;
  stdioJson: string;
  claudeStdio: string;
}

export interface PathError {
  code: string;
  path: string;
  message: string;
  /** With code out_of_range: the inclusive bounds. */
  min?: number;
  max?: number;
}

/** The Security setting: what scripts may touch (docs/process-ownership.md, "Confinement of skill scripts"). */
export interface ConfinementSettings {
  filesystem: 'workspace' | 'off';
  network: 'deny' | 'allow';
}

/** What a launcher enforced (or would enforce), as the envelope states it. */
export interface ConfinementReport extends ConfinementSettings {
  abi: number;
  enforced: string[];
  not_enforced: string[];
}

/** GetSecurity: the setting, its enforcement here and process ownership. */
export interface SecurityView {
  confinement: ConfinementSettings;
  enforcement: ConfinementReport | null;
  unavailable?: string;
  /** The backend's verdict: a launch now is confined (filesystem, TCP and UDP). */
  confined: boolean;
  ownership: string;
  ownershipUnverifiable?: string;
}

/** Field error of SetCapturePolicy (`invalid_capture_policy`). */
export interface CaptureFieldError {
  path: string;
  code: string;
  message: string;
}

// ---- method results -----------------------------------------------------

export interface AppInfoResult {
  version: string;
  dataDir: string;
  shell: 'browser' | 'desktop';
}

export interface ListSkillsResult {
  skills: SkillSummary[];
  roots: RootStatus[];
}

export interface RuntimeResult {
  pin: Pin | null;
  ok: boolean;
  problem?: string;
}

export interface SkillRootsResult {
  bundled: string;
  roots: string[];
}

export interface CapturePolicyResult {
  settings: CaptureSettings;
  effective: CaptureSettings;
  overrides: string[];
}

// ---- evidence -----------------------------------------------------------

/** What the library index keeps about one Evidence file. */
export interface EvidenceSummary {
  origin?: 'captured' | 'imported';
  file_name?: string;
  command?: string;
  started_at?: string;
  exit?: { code: number | null; signal: string | null; reason: string };
  settlement?: string;
  frames?: number;
  checkpoints?: number;
  truncated?: boolean;
  /** Captures with equal contracts can be compared. */
  comparison_contract_sha256?: string;
}

/** One Evidence file in the library. */
export interface EvidenceItem {
  evidence_id: string;
  predicate_type: string;
  operation: string;
  origin: 'captured' | 'imported';
  size: number;
  created_at: string;
  /** Shared with agents: every MCP connection may list, read and compare it. */
  shared: boolean;
  summary: EvidenceSummary;
  /** Who signed the attestation kept next to the file (Evidence library). */
  signature: EvidenceSignature;
}

/** installation: this installation's key; trusted: a key the person added; untrusted: a valid
 *  attestation by a key nobody trusts here; invalid: it does not attest this file; unsigned: none. */
export interface EvidenceSignature {
  status: 'installation' | 'trusted' | 'untrusted' | 'invalid' | 'unsigned';
  fingerprint?: string;
  message?: string;
}

export interface SigningKey {
  fingerprint: string;
  kind: 'installation' | 'trusted';
  /** The key new attestations are signed with. */
  current: boolean;
  pem: string;
}

export interface SigningKeys {
  installation: SigningKey[];
  trusted: SigningKey[];
}

/** A capture started from the Evidence library (StartCapture). */
export interface StartCaptureResult {
  capture_id: string;
  command: string;
  timeout_ms: number;
}

/** Progress and outcome of a StartCapture capture ("capture" event). */
export interface CaptureEvent {
  capture_id: string;
  state: 'running' | 'saving' | 'done' | 'failed' | 'cancelled';
  elapsed_ms: number;
  timeout_ms: number;
  evidence_id?: string;
  error?: { code: string; category: string; message: string; details?: unknown };
}

export interface GetEvidenceResult {
  item: EvidenceItem;
  /** The file's exact JSON (an Evidence v2 envelope). */
  evidence: unknown;
  verification: { valid: boolean; evidence_id: string; predicate_type: string; record_verified: boolean };
}

// ---- compare and asciicast interchange ---------------------------------

export type DimensionStatus = 'unchanged' | 'added' | 'removed' | 'changed' | 'truncated' | 'unknown';
export type DimensionName = 'terminal' | 'interaction' | 'exit' | 'filesystem' | 'protocol' | 'process' | 'shim';

export type FirstDivergence =
  | {
      status: 'found';
      dimension: DimensionName;
      index: number;
      left_at_ms: number | null;
      right_at_ms: number | null;
      left: unknown;
      right: unknown;
      left_location: string | null;
      right_location: string | null;
    }
  | { status: 'unknown'; reason: string }
  | { status: 'none' };

export interface TraceDiagnostic {
  kind: 'journal' | 'predicate' | 'cardinality' | 'edge' | 'prefix' | 'suffix' | 'trace';
  side: 'left' | 'right' | 'both';
  message: string;
  event_ids: string[];
  locations: string[];
}

export interface TraceSide {
  status: 'pass' | 'fail' | 'unknown';
  matched_variant: string | null;
  satisfied_constraints: Record<string, unknown> | null;
  trace: { event_id: string; source: string; capture_order: number; location: string }[];
  diagnostic: TraceDiagnostic | null;
}

export interface ComparisonResult {
  status: DimensionStatus;
  /** Absent in comparisons recorded before modes existed (they used the exact rules). */
  mode?: CompareMode;
  terminal: DimensionStatus;
  interaction: DimensionStatus;
  exit: DimensionStatus;
  filesystem: DimensionStatus;
  protocol: DimensionStatus;
  process: DimensionStatus;
  shim: DimensionStatus;
  first_divergence: FirstDivergence;
  trace?: { verdict: 'equivalent' | 'different' | 'nonconforming' | 'unknown'; left: TraceSide; right: TraceSide; diagnostic: TraceDiagnostic | null };
  limitations: string[];
}

/** behavior: did the program behave differently (the default); exact:
 * the same observations item by item, times included. */
export type CompareMode = 'behavior' | 'exact';

export interface DiffItem {
  index: number;
  left_at_ms: number | null;
  right_at_ms: number | null;
  left_location: string | null;
  right_location: string | null;
  left: unknown;
  right: unknown;
  /** The members in which two objects differ under the mode (times are
   * not named in behaviour mode); absent unless both sides are objects. */
  differing_fields?: string[];
}

export interface DimensionRow {
  name: DimensionName;
  status: DimensionStatus;
  dimension: DimensionName;
  left_count: number;
  right_count: number;
  total: number;
  /** How many differing items precede `items` (a page's start). */
  offset?: number;
  items: DiffItem[];
}

export interface ComparisonSide {
  evidence_id: string;
  available: boolean;
  command: string;
  started_at: string;
  completed_at: string;
  /** The capture record (a CaptureRecord), or null when not in the library. */
  record: unknown;
  problem?: string;
}

export interface ComparisonView {
  evidence_id?: string;
  saved: boolean;
  predicate_type: string;
  result: ComparisonResult;
  dimensions: DimensionRow[];
  left: ComparisonSide;
  right: ComparisonSide;
  trace_spec: unknown;
  recomputed?: 'match' | 'mismatch' | 'unavailable';
  /** The members in which the first divergence's items differ under the mode. */
  divergence_fields?: string[] | null;
}

export interface ImportAsciicastResult {
  evidence_id: string;
  predicate_type: string;
  origin: 'imported';
  label: string;
  version: 2 | 3;
  frames: number;
  duration_ms: number;
  /** The TerminalRecording (see frontend/src/evidence/asciicast.ts). */
  record: unknown;
}

/** Every method: its argument object and its result. */
export interface ApiMethods {
  AppInfo: { args: Record<string, never>; result: AppInfoResult };
  ListSkills: { args: Record<string, never>; result: ListSkillsResult };
  InspectSkill: { args: { name: string }; result: SkillInspection };
  StartRun: { args: { skill: string; input: string; workspace: string }; result: { runId: string } };
  PendingProposals: { args: Record<string, never>; result: { proposals: ProposalView[] } };
  Decide: { args: { proposalId: string; approve: boolean }; result: ProposalView };
  ProposalFile: { args: { proposalId: string; path: string }; result: ProposalFileResult };
  PendingPlans: { args: Record<string, never>; result: { plans: PlanView[] } };
  DecidePlan: { args: { planId: string; approve: boolean }; result: PlanView };
  PendingGrants: { args: Record<string, never>; result: { grants: GrantView[] } };
  DecideGrant: { args: { grantId: string; approve: boolean; scope?: GrantScope }; result: GrantView };
  CancelRun: { args: { runId: string }; result: { cancelled: boolean } };
  ListRuns: {
    args: { limit?: number; status?: string; skill?: string; agent?: string };
    result: { runs: RunRecord[]; active: ActiveRun[] };
  };
  RunEvents: { args: { attemptId: string }; result: { events: StoredEvent[] } };
  GetPolicy: { args: Record<string, never>; result: Policy };
  SetPolicy: { args: { policy: Policy }; result: Policy };
  ListAgents: { args: Record<string, never>; result: { agents: Agent[] } };
  AddAgent: { args: { name: string; canExecuteSkills: boolean }; result: { agent: Agent; token: string; connect: AgentConnection } };
  SetAgentDisabled: { args: { id: string; disabled: boolean }; result: Agent };
  RemoveAgent: { args: { id: string }; result: { removed: true } };
  GetRuntime: { args: Record<string, never>; result: RuntimeResult };
  RepinRuntime: { args: { path?: string }; result: RuntimeResult };
  GetSkillRoots: { args: Record<string, never>; result: SkillRootsResult };
  SetSkillRoots: { args: { roots: string[] }; result: SkillRootsResult };
  GetCapturePolicy: { args: Record<string, never>; result: CapturePolicyResult };
  SetCapturePolicy: { args: { settings: CaptureSettings }; result: CapturePolicyResult };
  GetSecurity: { args: Record<string, never>; result: SecurityView };
  SetSecurity: { args: ConfinementSettings; result: SecurityView };
  ListEvidence: { args: { limit?: number }; result: { evidence: EvidenceItem[] } };
  GetEvidence: { args: { id: string }; result: GetEvidenceResult };
  ImportEvidence: {
    args: { name: string; data: string /* base64 */; attestation?: string /* base64 of FILE.intoto.jsonl */ };
    result: { item: EvidenceItem; already_present: boolean };
  };
  DeleteEvidence: { args: { id: string }; result: { deleted: true } };
  ShareEvidence: { args: { id: string; shared: boolean }; result: { item: EvidenceItem } };
  StartCapture: { args: { scenario: string }; result: StartCaptureResult };
  CancelCapture: { args: { capture_id: string }; result: { cancelled: boolean } };
  AttestEvidence: {
    args: { id: string };
    /** evidence: base64 of the attested file's exact bytes (the subject), to save as evidence_name beside the attestation. */
    result: { file_name: string; attestation: string; evidence_name: string; evidence: string; signature: EvidenceSignature };
  };
  SigningKeys: { args: Record<string, never>; result: SigningKeys };
  RotateSigningKey: { args: Record<string, never>; result: SigningKeys };
  TrustSigningKey: { args: { pem: string }; result: SigningKeys };
  UntrustSigningKey: { args: { fingerprint: string }; result: SigningKeys };
  CompareCaptures: { args: { left: string; right: string; traceSpec?: string; save?: boolean; mode?: CompareMode }; result: ComparisonView };
  CompareDiffPage: { args: { left: string; right: string; mode?: CompareMode; dimension: DimensionName; offset: number; limit?: number }; result: DimensionRow };
  OpenComparison: { args: { id?: string; text?: string }; result: ComparisonView };
  ExportAsciicast: { args: { id: string }; result: { name: string; text: string; events: number } };
  ImportAsciicast: { args: { name: string; text: string }; result: ImportAsciicastResult };
  GetAttention: { args: Record<string, never>; result: AttentionSettings };
  SetAttention: { args: AttentionSettings; result: AttentionSettings };
}

/** How Gatehouse may get the person's attention (GetAttention). */
export interface AttentionSettings {
  notifications: boolean;
}

export type MethodName = keyof ApiMethods;

// ---- events -------------------------------------------------------------

export interface ProposalEvent {
  type: 'raised' | ProposalState;
  proposal: ProposalView;
}

export interface SettingsEvent {
  what: 'policy' | 'agents' | 'runtime' | 'roots' | 'capture' | 'attention' | 'security';
}

export interface EventPayloads {
  proposal: ProposalEvent;
  plan: { type: string; plan: PlanView };
  grant: { type: string; grant: GrantView };
  run: RunEvent;
  settings: SettingsEvent;
  evidence: { evidence_id: string; shared: boolean };
  capture: CaptureEvent;
  /** The person clicked a desktop notification: show this request. */
  attention: { focus: string; kind: 'proposal' | 'plan' | 'grant' };
}

export type EventName = keyof EventPayloads;

/** Structured API error body. */
export interface ApiErrorBody {
  error: true;
  code: string;
  category: string;
  message: string;
  details?: unknown;
}
