// The shapes of a Process Capture v4 record (docs/formats/capture-record.md, "The capture
// record") and of its Evidence v2 envelope (docs/formats/capture-record.md), as the
// viewer reads them. Field names are the record's snake_case names; the
// Go backend verifies every invariant before a record reaches the UI.
// The Go types of backend/capture/record own these shapes: its test
// TestFrontendRecordTypesMatchGo fails when an interface here and its Go
// type (named beside each) differ in a field name.

/** One raw PTY chunk (normalized and redacted at capture time). */
export interface RawFrame {
  sequence: number;
  at_ms: number;
  data: string;
}

/** The emulated screen after a raw chunk or a resize. */
export interface RenderedFrame {
  sequence: number;
  at_ms: number;
  columns: number;
  rows: number;
  cursor_x: number;
  cursor_y: number;
  active_buffer: 'normal' | 'alternate';
  lines: string[];
  serialized_state: string;
}

export interface InteractionEvent {
  sequence: number;
  scheduled_at_ms: number;
  dispatched_at_ms: number;
  type: 'input' | 'resize' | 'stdin_close' | 'signal';
  data: string;
  outcome: 'dispatched' | 'target_exited' | 'failed';
}

export interface ProcessSample {
  at_ms: number;
  pid: number;
  parent_pid: number;
  command: string;
  process_group_id: number | null;
  session_id: number | null;
}

export interface FileState {
  path: string;
  mode: number;
  size: number;
  type: 'file' | 'symlink' | 'directory' | 'other';
  sha256: string | null;
  symlink_target: string | null;
}

export interface FileEffect {
  path: string;
  status: 'created' | 'deleted' | 'modified' | 'unchanged';
  before: FileState | null;
  after: FileState | null;
}

export interface FilesystemCheckpoint {
  name: string;
  at_ms: number;
  files: FileState[];
  effects: FileEffect[];
  truncated: boolean;
}

export interface ShimEvent {
  sequence: number;
  at_ms: number;
  command: string;
  route_index: number | null;
  arguments: string[];
  working_directory: string;
  outcome: 'matched' | 'unmatched' | 'exhausted';
}

export interface ReplayTransition {
  sequence: number;
  at_ms: number;
  transition_id: string;
  state_before: string;
  state_after: string;
  sensitive_aliases: string[];
}

export interface ProtocolEvent {
  sequence: number;
  at_ms: number;
  protocol: 'http' | 'websocket';
  direction: 'request' | 'response' | 'received' | 'sent';
  method: string | null;
  path: string | null;
  data: string;
  outcome: string;
}

export interface JournalEntry {
  capture_order: number;
  collection: string;
  index: number;
}

export interface Exit {
  code: number | null;
  signal: string | null;
  reason: 'exited' | 'timeout' | 'idle_timeout';
}

export interface Settlement {
  state: string;
  elapsed_ms: number;
  cleanup_outcome: string;
}

export interface ResidualUnknown {
  scope: string;
  reason: string;
}

export interface Cleanup {
  owned_process_group: string;
  temporary_root: string;
}

export interface CaptureManifest {
  gatehouse_version: string;
  provider_version: string;
  platform: string;
  architecture: string;
  pty_backend: string;
  started_at: string;
  completed_at: string;
  scenario: Record<string, unknown>;
  comparison_contract: unknown;
  shim_plan: unknown;
  replay_plan: unknown;
  full_scenario_sha256: string;
  comparison_contract_sha256: string;
  executable_sha256: string;
  normalization_sha256: string;
  shim_plan_sha256: string;
  replay_plan_sha256: string;
}

/** A Process Capture v4 record (an Evidence `normalized_result`). */
export interface CaptureRecord {
  schema_version: number;
  manifest: CaptureManifest;
  normalization: unknown;
  frames: RawFrame[];
  rendered_frames: RenderedFrame[];
  interaction_events: InteractionEvent[];
  exit: Exit;
  settlement: Settlement;
  process_samples: ProcessSample[];
  filesystem_checkpoints: FilesystemCheckpoint[];
  shim_events: ShimEvent[];
  protocol_events: ProtocolEvent[];
  replay_transitions: ReplayTransition[];
  reactive_run: unknown;
  event_journal: JournalEntry[];
  files_before: FileState[];
  files_after: FileState[];
  filesystem_effects: FileEffect[];
  truncated: boolean;
  limitations: string[];
  residual_unknowns: ResidualUnknown[];
  cleanup: Cleanup;
}

/** An Evidence v2 envelope; `normalized_result` is a CaptureRecord for
 * predicate gatehouse.process-capture/v4. */
export interface EvidenceEnvelope {
  schema_version: number;
  evidence_id: string;
  subject: null | { name: string; digest: { sha256: string }; format: string; architecture: string; local_path: string };
  provider: { id: string; name: string; version: string };
  predicate_type: string;
  operation: string;
  parameters: Record<string, unknown>;
  raw_result: unknown;
  normalized_result: unknown;
  confidence: string;
  authority: string;
  environment: unknown;
  limitations: string[];
  locations: unknown[];
  evidence_links: string[];
}

export const PREDICATE_CAPTURE = 'gatehouse.process-capture/v4';

/** The scenario's terminal settings, with the spec's defaults. */
export function terminalOf(rec: CaptureRecord): { columns: number; rows: number; scrollback: number } {
  const t = (rec.manifest?.scenario?.terminal ?? {}) as { columns?: number; rows?: number; scrollback?: number };
  return { columns: t.columns ?? 80, rows: t.rows ?? 24, scrollback: t.scrollback ?? 1000 };
}
