// Imported asciicast recordings (predicate gatehouse.terminal-recording/v1,
// made by ImportAsciicast): their shape, and the adapter that lets the
// capture Player replay one. A recording is terminal-only; it never claims
// process, filesystem, shim or protocol observations, so the adapter gives
// those lists empty and the view labels the recording as imported with
// every non-terminal dimension "unknown".

import type { CaptureRecord, InteractionEvent, RawFrame, RenderedFrame } from './record';

export const PREDICATE_TERMINAL_RECORDING = 'gatehouse.terminal-recording/v1';

export interface TerminalRecording {
  schema_version: 1;
  origin: {
    kind: 'imported_asciicast';
    label: string;
    format: 'asciicast';
    version: 2 | 3;
    file_name: string;
    file_sha256: string;
    file_bytes: number;
    title: string | null;
    command: string | null;
    timestamp: number | null;
    idle_time_limit: number | null;
    term_type: string | null;
    exit_status: number | null;
  };
  terminal: { columns: number; rows: number };
  frames: RawFrame[];
  rendered_frames: RenderedFrame[];
  interaction_events: InteractionEvent[];
  markers: { sequence: number; at_ms: number; label: string }[];
  dimensions: Record<'terminal' | 'interaction' | 'exit' | 'filesystem' | 'protocol' | 'process' | 'shim', 'observed' | 'unknown'>;
  residual_unknowns: { scope: string; reason: string }[];
  truncated: boolean;
  limitations: string[];
}

/** A CaptureRecord view of a recording for the Player: its frames, rendered
 * frames and interaction events as they are, the terminal size as the
 * scenario's, and nothing else observed. */
export function recordingAsCapture(rec: TerminalRecording): CaptureRecord {
  return {
    schema_version: 4,
    manifest: {
      gatehouse_version: '',
      provider_version: '',
      platform: '',
      architecture: '',
      pty_backend: '',
      started_at: '',
      completed_at: '',
      scenario: { terminal: { columns: rec.terminal.columns, rows: rec.terminal.rows, scrollback: 1000 } },
      comparison_contract: null,
      shim_plan: null,
      replay_plan: null,
      full_scenario_sha256: '',
      comparison_contract_sha256: '',
      executable_sha256: '',
      normalization_sha256: '',
      shim_plan_sha256: '',
      replay_plan_sha256: '',
    },
    normalization: null,
    frames: rec.frames,
    rendered_frames: rec.rendered_frames,
    interaction_events: rec.interaction_events,
    exit: { code: rec.origin.exit_status, signal: null, reason: 'exited' },
    settlement: { state: 'unknown', elapsed_ms: 0, cleanup_outcome: 'unknown' },
    process_samples: [],
    filesystem_checkpoints: [],
    shim_events: [],
    protocol_events: [],
    replay_transitions: [],
    reactive_run: null,
    event_journal: [],
    files_before: [],
    files_after: [],
    filesystem_effects: [],
    truncated: rec.truncated,
    limitations: rec.limitations,
    residual_unknowns: rec.residual_unknowns,
    cleanup: { owned_process_group: 'unknown', temporary_root: 'unknown' },
  };
}

/** Offers text as a file download. */
export function downloadText(name: string, text: string, type = 'application/x-asciicast'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
