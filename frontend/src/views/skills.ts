// Skills: the list of discovered skills, one skill's inspection, and the
// "Run…" panel (a form generated from the input schema, kept in sync with
// a raw JSON editor).

import { api, onEvent, onReconnect } from '../api/client';
import type { ListSkillsResult, RunEvent, SkillInspection, SkillSummary } from '../api/types';
import { h, icon, replace, uid } from '../lib/dom';
import { formatBytes, formatDuration, humanize, prettyJson } from '../lib/format';
import { availability, runEventLabel, runStatus } from '../lib/labels';
import { renderMarkdown } from '../lib/markdown';
import { makeTextVisible, visibleString } from '../lib/visible';
import { buildForm, encode, initialState, parseRaw, toText, type FieldSpec, type FormModel, type FormState } from '../lib/schemaform';
import { loadRecent, saveRecent } from '../lib/recent';
import { badge, codeBlock, emptyState, errorBox, hashChip, kv, loading, pathText, progressBar } from '../lib/ui';
import { FirstRunCard } from './first_run';
import type { View } from './view';

type Tab = 'instructions' | 'details' | 'execution' | 'issues';

export function skillsView(): View {
  const el = h('div', { class: 'split skills-view' });
  const listPane = h('aside', { class: 'list-pane', 'aria-label': 'Skills' });
  const detailPane = h('section', { class: 'detail-pane', 'aria-live': 'polite' });
  el.append(listPane, detailPane);

  let list: ListSkillsResult | null = null;
  let listError: unknown = null;
  let filter = '';
  let selected = '';
  let inspection: SkillInspection | null = null;
  let inspectError: unknown = null;
  let tab: Tab = 'instructions';
  let runPanel: RunPanel | null = null;
  let loadSeq = 0;
  const firstRun = new FirstRunCard();

  async function loadList(): Promise<void> {
    try {
      list = await api.ListSkills({});
      listError = null;
    } catch (e) {
      listError = e;
    }
    renderList();
    // Only while the Skills view is what the person is looking at: a
    // background reload must never touch the address bar.
    const onSkills = location.hash === '' || location.hash === '#/' || location.hash === '#/skills';
    if (!selected && list && list.skills.length && onSkills) {
      // Nothing chosen yet: show the first skill without adding history.
      history.replaceState(null, '', `#/skills/${encodeURIComponent(list.skills[0].name)}`);
      select(list.skills[0].name);
    } else if (!selected) {
      renderDetail();
    }
  }

  async function select(name: string): Promise<void> {
    if (name === selected && (inspection || inspectError)) return;
    selected = name;
    inspection = null;
    inspectError = null;
    runPanel?.destroy();
    runPanel = null;
    renderList();
    renderDetail();
    const seq = ++loadSeq;
    try {
      const r = await api.InspectSkill({ name });
      if (seq !== loadSeq) return;
      inspection = r;
    } catch (e) {
      if (seq !== loadSeq) return;
      inspectError = e;
    }
    renderDetail();
  }

  function renderList(): void {
    const head = h(
      'div',
      { class: 'pane-head' },
      h('h1', null, 'Skills'),
      h('input', {
        type: 'search',
        class: 'input small',
        placeholder: 'Filter',
        'aria-label': 'Filter skills',
        value: filter,
        oninput: (e: Event) => {
          filter = (e.target as HTMLInputElement).value;
          renderRows();
        },
      }),
    );
    const rows = h('div', { class: 'rows', role: 'list' });
    const renderRows = () => {
      if (listError) return replace(rows, errorBox(listError, 'Could not list skills.'));
      if (!list) return replace(rows, loading('Loading skills…'));
      const q = filter.trim().toLowerCase();
      const shown = list.skills.filter((s) => !q || s.name.toLowerCase().includes(q) || s.description.toLowerCase().includes(q));
      if (list.skills.length === 0) {
        return replace(rows, emptyState('No skills found', 'Add a folder with skills under Security → Skill roots; each skill is a folder with a SKILL.md.'));
      }
      if (shown.length === 0) return replace(rows, emptyState('No match', `No skill name or description contains “${filter}”.`));
      replace(rows, shown.map(skillRow));
    };
    renderRows();
    const keepScroll = listPane.querySelector('.rows')?.scrollTop ?? 0;
    const roots = list?.roots.filter((r) => r.error) ?? [];
    replace(
      listPane,
      head,
      rows,
      roots.length
        ? h(
            'div',
            { class: 'root-errors' },
            roots.map((r) => h('div', { class: 'alert tone-warn small' }, icon('warn'), h('div', null, 'Root ', pathText(r.path), ': ', r.error ?? ''))),
          )
        : null,
    );
    rows.scrollTop = keepScroll;
  }

  function skillRow(s: SkillSummary): HTMLElement {
    const a = availability(s);
    return h(
      'a',
      {
        href: `#/skills/${encodeURIComponent(s.name)}`,
        class: ['skill-row', s.name === selected ? 'selected' : ''],
        role: 'listitem',
        'aria-current': s.name === selected ? 'true' : undefined,
        'data-testid': 'skill-row',
        dataset: { name: s.name },
      },
      h('div', { class: 'row-top' }, h('span', { class: 'skill-name' }, s.name), badge(a.label, a.tone, a.title)),
      h('p', { class: 'skill-desc' }, s.description || h('span', { class: 'muted' }, 'No description.')),
      h(
        'div',
        { class: 'row-meta' },
        h('span', { title: s.root }, s.root_origin),
        s.kind === 'flat' ? h('span', null, 'single file') : null,
        s.warnings ? h('span', { class: 'tone-text-warn' }, `${s.warnings} warning${s.warnings === 1 ? '' : 's'}`) : null,
        s.shadowed?.length ? h('span', { title: 'Skills with the same name in earlier roots are hidden by this one.' }, `shadows ${s.shadowed.length}`) : null,
      ),
    );
  }

  function renderDetail(): void {
    if (!selected) {
      replace(detailPane, h('div', { class: 'detail-body' }, firstRun.el, list && list.skills.length === 0 ? null : emptyState('Choose a skill', 'Pick a skill on the left to read its instructions, files and schemas, and to run it.')));
      return;
    }
    if (inspectError) {
      replace(detailPane, h('div', { class: 'detail-body' }, firstRun.el, errorBox(inspectError, `Could not inspect ${selected}.`)));
      return;
    }
    if (!inspection) {
      replace(detailPane, h('div', { class: 'detail-body' }, firstRun.el, loading(`Inspecting ${selected}…`)));
      return;
    }
    const s = inspection;
    const summary = list?.skills.find((x) => x.name === s.name);
    const av = availability({ valid: s.valid, execution: { available: s.execution.available, reason: s.execution.reason, issues: s.execution.issues.length } });
    const issueCount = s.errors.length + s.warnings.length + s.resource_issues.length + s.execution.issues.length + s.execution.unsupported.length;
    const canRun = s.execution.available && !!s.execution.manifest;

    const header = h(
      'header',
      { class: 'detail-head' },
      h(
        'div',
        { class: 'detail-title' },
        h('h1', null, s.name),
        h('div', { class: 'badges' }, badge(av.label, av.tone, av.title), badge(s.root_origin, 'neutral', s.root), s.kind === 'flat' ? badge('single file', 'neutral') : null),
      ),
      h(
        'div',
        { class: 'detail-actions' },
        h(
          'button',
          {
            type: 'button',
            class: runPanel ? 'btn' : 'btn primary',
            'data-testid': 'run-open',
            disabled: !canRun,
            title: canRun ? 'Run this skill’s script with an input you write' : 'This skill has no runnable script',
            'aria-expanded': runPanel ? 'true' : 'false',
            onclick: () => {
              if (runPanel) {
                runPanel.destroy();
                runPanel = null;
              } else {
                runPanel = new RunPanel(s, () => {
                  runPanel?.destroy();
                  runPanel = null;
                  renderDetail();
                });
              }
              renderDetail();
              runPanel?.focus();
            },
          },
          runPanel ? 'Close run panel' : 'Run…',
        ),
      ),
    );
    const desc = h('p', { class: 'detail-desc' }, s.frontmatter.description ?? summary?.description ?? '');

    const tabs: [Tab, string][] = [
      ['instructions', 'Instructions'],
      ['details', 'Files & metadata'],
      ['execution', 'Execution'],
      ['issues', issueCount ? `Issues (${issueCount})` : 'Issues'],
    ];
    const tabIds = Object.fromEntries(tabs.map(([t]) => [t, uid('tab')])) as Record<Tab, string>;
    const panelId = uid('panel');
    const tabList = h(
      'div',
      { class: 'tabs', role: 'tablist', 'aria-label': 'Skill sections' },
      tabs.map(([t, label]) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: tabIds[t],
            class: ['tab', t === tab ? 'active' : ''],
            'aria-selected': t === tab ? 'true' : 'false',
            'aria-controls': panelId,
            tabindex: t === tab ? '0' : '-1',
            dataset: { tab: t },
            onclick: () => {
              tab = t;
              renderDetail();
              detailPane.querySelector<HTMLElement>(`[data-tab="${t}"]`)?.focus();
            },
            onkeydown: (e: KeyboardEvent) => {
              if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
              const i = tabs.findIndex(([x]) => x === t);
              const n = tabs[(i + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length][0];
              tab = n;
              renderDetail();
              detailPane.querySelector<HTMLElement>(`[data-tab="${n}"]`)?.focus();
            },
          },
          label,
        ),
      ),
    );
    const panel = h('div', { class: 'tab-panel', role: 'tabpanel', id: panelId, 'aria-labelledby': tabIds[tab], tabindex: '0' }, tabBody(s, tab));
    const scroll = detailPane.querySelector('.detail-body')?.scrollTop ?? 0;
    const body = h('div', { class: 'detail-body' }, firstRun.el, header, desc, runPanel ? runPanel.el : null, tabList, panel);
    replace(detailPane, body);
    body.scrollTop = scroll;
  }

  function tabBody(s: SkillInspection, t: Tab): Node {
    switch (t) {
      case 'instructions': {
        if (!s.body.trim()) return emptyState('No instructions', 'This SKILL.md has frontmatter but no body.');
        const md = h('article', { class: 'markdown' });
        md.innerHTML = renderMarkdown(s.body); // sanitized, see lib/markdown.ts
        makeTextVisible(md);
        return md;
      }
      case 'details':
        return detailsTab(s);
      case 'execution':
        return executionTab(s);
      case 'issues':
        return issuesTab(s);
    }
  }

  const offs = [
    onEvent('settings', (e) => {
      if (e && (e.what === 'roots' || e.what === 'runtime')) {
        const keep = selected;
        void loadList().then(() => {
          if (!keep) return;
          selected = ''; // force a fresh inspection of the same skill
          void select(keep);
        });
      }
    }),
    onReconnect(() => void loadList()),
  ];

  void loadList();

  return {
    el,
    title: 'Skills',
    route(parts: string[]) {
      const name = parts[0] ? decodeURIComponent(parts[0]) : '';
      if (name && name !== selected) void select(name);
      else if (!name && selected) history.replaceState(null, '', `#/skills/${encodeURIComponent(selected)}`);
      else if (!name && list && list.skills.length) {
        history.replaceState(null, '', `#/skills/${encodeURIComponent(list.skills[0].name)}`);
        void select(list.skills[0].name);
      }
    },
    destroy() {
      offs.forEach((o) => o());
      runPanel?.destroy();
      firstRun.destroy();
    },
  };
}

function detailsTab(s: SkillInspection): Node {
  const fm = s.frontmatter;
  const meta = fm.metadata && Object.keys(fm.metadata).length ? kv(Object.entries(fm.metadata).map(([k, v]) => [k, v]), 'nested') : null;
  return h(
    'div',
    { class: 'stack' },
    h('h3', { class: 'label' }, 'Frontmatter'),
    kv([
      ['name', fm.name ?? null],
      ['license', fm.license ?? null],
      ['compatibility', fm.compatibility ?? null],
      ['allowed-tools', fm.allowed_tools?.length ? h('span', null, fm.allowed_tools.map((t) => h('code', { class: 'chip mono' }, t))) : null],
      ['metadata', meta],
    ]),
    s.unknown_fields.length
      ? h(
          'div',
          { class: 'unknown-fields' },
          h('h3', { class: 'label' }, 'Other fields'),
          h(
            'ul',
            { class: 'plain' },
            s.unknown_fields.map((u) =>
              h('li', null, h('code', { class: 'mono' }, u.key), ' ', badge('not enforced by Gatehouse', 'warn', u.note), codeBlock(u.raw, { cls: 'small' })),
            ),
          ),
        )
      : null,
    h('h3', { class: 'label' }, `Files (${s.resources.length})`),
    s.resources.length
      ? h(
          'table',
          { class: 'table compact' },
          h('thead', null, h('tr', null, h('th', null, 'Path'), h('th', null, 'Kind'), h('th', { class: 'num' }, 'Size'))),
          h(
            'tbody',
            null,
            s.resources.map((r) => h('tr', null, h('td', null, h('code', { class: 'mono' }, r.path)), h('td', null, r.kind), h('td', { class: 'num' }, formatBytes(r.size)))),
          ),
        )
      : h('p', { class: 'muted' }, 'No files besides SKILL.md.'),
    h('h3', { class: 'label' }, 'Location'),
    kv([
      ['folder', s.dir ? pathText(s.dir) : null],
      ['SKILL.md', pathText(s.file)],
      ['root', h('span', null, pathText(s.root), ' ', badge(s.root_origin, 'neutral'))],
    ]),
    s.shadowed.length
      ? h(
          'div',
          null,
          h('h3', { class: 'label' }, 'Hidden skills with the same name'),
          h('p', { class: 'muted small' }, 'Later roots win; these copies are not used.'),
          h('ul', { class: 'plain' }, s.shadowed.map((x) => h('li', null, pathText(x.file), ' ', badge(x.root.origin, 'neutral')))),
        )
      : null,
  );
}

function executionTab(s: SkillInspection): Node {
  const ex = s.execution;
  const m = ex.manifest;
  return h(
    'div',
    { class: 'stack' },
    kv([
      ['runnable', ex.available ? badge('Yes', 'ok') : h('span', null, badge('No', 'warn'), ' ', ex.reason ? humanize(ex.reason) : '')],
      ['revision', ex.revision ? hashChip(ex.revision) : null],
    ]),
    m
      ? h(
          'div',
          { class: 'stack' },
          h('h3', { class: 'label' }, 'Manifest (execution.json)'),
          kv([
            ['entrypoint', h('code', { class: 'mono' }, m.entrypoint)],
            ['files', h('span', null, m.files.map((f) => h('code', { class: 'chip mono' }, f)))],
            ['time limit', formatDuration(m.timeoutMs)],
            ['output limit', formatBytes(m.maxOutputBytes)],
            ['schema version', String(m.schemaVersion)],
          ]),
          h('div', { class: 'two-col' }, h('div', null, h('h3', { class: 'label' }, 'Input schema'), codeBlock(prettyJson(m.inputSchema), { cls: 'schema' })), h('div', null, h('h3', { class: 'label' }, 'Output schema'), codeBlock(prettyJson(m.outputSchema), { cls: 'schema' }))),
        )
      : h('p', { class: 'muted' }, ex.reason === 'prompt_only' ? 'This skill has no execution.json: it only gives the agent instructions.' : 'No valid manifest.'),
  );
}

function issuesTab(s: SkillInspection): Node {
  const groups: [string, { code: string; path: string; message: string }[]][] = [
    ['Errors', s.errors],
    ['Warnings', s.warnings],
    ['File issues', s.resource_issues],
    ['Execution issues', s.execution.issues],
  ];
  const any = groups.some(([, l]) => l.length) || s.execution.unsupported.length;
  if (!any) return emptyState('No issues', 'Inspection found nothing wrong with this skill.');
  return h(
    'div',
    { class: 'stack' },
    groups
      .filter(([, l]) => l.length)
      .map(([title, l]) =>
        h(
          'div',
          null,
          h('h3', { class: 'label' }, title),
          h(
            'ul',
            { class: 'issues' },
            l.map((i) => h('li', null, h('code', { class: 'code-tag' }, i.code), i.path ? h('code', { class: 'mono muted' }, i.path) : null, h('span', null, i.message))),
          ),
        ),
      ),
    s.execution.unsupported.length
      ? h('div', null, h('h3', { class: 'label' }, 'Unsupported schema keywords'), h('p', null, s.execution.unsupported.map((u) => h('code', { class: 'chip mono' }, u))))
      : null,
  );
}

// ---- the Run… panel -----------------------------------------------------

class RunPanel {
  readonly el: HTMLElement;
  private model: FormModel | null;
  private formReason = '';
  private state: FormState = {};
  private rawText = '';
  private lastEdited: 'form' | 'raw' = 'form';
  private rawProblem = '';
  private formFrozen = '';
  private formEl = h('div', { class: 'run-form' });
  private raw: HTMLTextAreaElement;
  private rawNote = h('p', { class: 'raw-note small', 'aria-live': 'polite' });
  private workspace: HTMLInputElement;
  private startBtn: HTMLButtonElement;
  private statusEl = h('div', { class: 'run-status', 'aria-live': 'polite' });
  private runId = '';
  private attemptId = '';
  private lastStep: RunEvent | null = null;
  private progress: { completed: number; total?: number; message?: string } | undefined;
  private result = '';
  private error: unknown = null;
  private starting = false;
  /** Set by the first Run press: only then does an empty required field say "Required". */
  private attempted = false;
  private recentEl = h('div', { class: 'recent-ws', 'data-testid': 'run-recent' });
  private off: () => void;
  private readonly skill: SkillInspection;

  constructor(skill: SkillInspection, onClose: () => void) {
    this.skill = skill;
    const schema = skill.execution.manifest?.inputSchema;
    const built = buildForm(schema);
    this.model = built.ok ? built.model : null;
    if (!built.ok) this.formReason = built.reason;
    if (this.model) {
      this.state = initialState(this.model);
      this.rawText = toText(encode(this.model, this.state).value);
    } else {
      this.rawText = '{}';
    }
    const rawId = uid('raw');
    this.raw = h('textarea', {
      id: rawId,
      class: 'input mono raw-editor',
      spellcheck: 'false',
      'data-testid': 'run-input-raw',
      rows: '12',
      'aria-describedby': `${rawId}-note`,
      oninput: () => this.onRaw(),
    });
    this.raw.value = this.rawText;
    this.rawNote.id = `${rawId}-note`;
    const wsId = uid('ws');
    this.workspace = h('input', {
      id: wsId,
      type: 'text',
      class: 'input mono',
      'data-testid': 'run-workspace',
      placeholder: 'Leave empty for the directory Gatehouse was started in',
      spellcheck: 'false',
      autocomplete: 'off',
      list: `${wsId}-recent`,
    });
    const recentList = h('datalist', { id: `${wsId}-recent` });
    this.startBtn = h('button', { type: 'button', class: 'btn primary', 'data-testid': 'run-start', onclick: () => void this.start() }, 'Run');
    const m = skill.execution.manifest;
    this.el = h(
      'section',
      { class: 'run-panel card', 'aria-label': `Run ${skill.name}` },
      h(
        'header',
        { class: 'card-head' },
        h(
          'div',
          null,
          h('h2', null, `Run ${skill.name}`),
          h(
            'p',
            { class: 'card-desc' },
            'Write the input below. Gatehouse checks it against the input schema and, if your policy asks, shows you the consent dialog before anything runs.',
            m ? ` Limits: ${formatDuration(m.timeoutMs)}, ${formatBytes(m.maxOutputBytes)} of output.` : '',
          ),
        ),
        h('div', { class: 'card-actions' }, h('button', { type: 'button', class: 'icon-btn', 'aria-label': 'Close run panel', title: 'Close', onclick: onClose }, icon('x'))),
      ),
      h(
        'div',
        { class: 'run-editors' },
        h('div', { class: 'editor-col' }, h('h3', { class: 'label' }, 'Form'), this.formEl),
        h('div', { class: 'editor-col' }, h('label', { class: 'label', for: rawId }, 'Raw JSON (sent exactly as written)'), this.raw, this.rawNote),
      ),
      this.exampleRow(),
      h(
        'div',
        { class: 'run-bottom' },
        h('div', { class: 'field grow' }, h('label', { for: wsId }, 'Workspace'), this.workspace, recentList, this.recentEl),
        h('div', { class: 'run-go' }, this.startBtn),
      ),
      this.statusEl,
    );
    this.renderForm();
    this.renderNote();
    this.renderRecent(loadRecent(), recentList);
    this.off = onEvent('run', (e) => this.onRunEvent(e));
  }

  /** "Use example input" when the backend offers the bundle's example (or why it does not). */
  private exampleRow(): HTMLElement | null {
    const ex = this.skill.execution.exampleInput;
    const problem = this.skill.execution.exampleInputProblem;
    if (!ex && !problem) return null;
    return h(
      'div',
      { class: 'example-row small' },
      ex
        ? [
            h('button', { type: 'button', class: 'btn small', 'data-testid': 'run-use-example', onclick: () => this.useExample(ex.text) }, 'Use example input'),
            h('span', { class: 'muted' }, 'from ', h('code', { class: 'mono' }, ex.path), ' in the bundle; replaces what is written above.'),
          ]
        : h('span', { class: 'muted', 'data-testid': 'run-example-problem' }, visibleString(problem ?? '')),
    );
  }

  private useExample(text: string): void {
    this.raw.value = text;
    this.onRaw();
    this.raw.focus();
  }

  /** The recent workspaces: in the input's suggestions and as one-press buttons. */
  private renderRecent(recent: string[], datalist?: HTMLDataListElement): void {
    const dl = datalist ?? this.el.querySelector<HTMLDataListElement>('datalist');
    if (dl) replace(dl, recent.map((w) => h('option', { value: w })));
    replace(
      this.recentEl,
      recent.length ? h('span', { class: 'muted small' }, 'Recent:') : null,
      recent.map((w) =>
        h(
          'button',
          {
            type: 'button',
            class: 'btn ghost small',
            title: visibleString(w),
            'data-testid': 'run-recent-ws',
            onclick: () => {
              this.workspace.value = w;
              this.workspace.focus();
            },
          },
          visibleString(w),
        ),
      ),
    );
  }

  focus(): void {
    (this.formEl.querySelector<HTMLElement>('input, textarea, select') ?? this.raw).focus();
  }

  destroy(): void {
    this.off();
  }

  private onRaw(): void {
    this.rawText = this.raw.value;
    this.lastEdited = 'raw';
    if (!this.model) {
      this.rawProblem = '';
      try {
        JSON.parse(this.rawText);
      } catch (e) {
        this.rawProblem = 'The raw JSON is not valid: ' + (e instanceof Error ? e.message : String(e));
      }
      this.renderNote();
      return;
    }
    const r = parseRaw(this.model, this.rawText);
    if (r.ok) {
      this.state = r.state;
      this.rawProblem = '';
      this.formFrozen = '';
    } else {
      this.rawProblem = r.syntax ? r.reason : '';
      this.formFrozen = r.syntax ? 'The form is paused until the raw JSON is valid again.' : `The form can’t show this JSON (${r.reason}); keep editing it here.`;
    }
    this.renderForm();
    this.renderNote();
  }

  private onField(name: string, value: string | boolean | null): void {
    if (!this.model) return;
    this.state[name] = value;
    this.lastEdited = 'form';
    this.formFrozen = '';
    this.rawProblem = '';
    this.rawText = toText(encode(this.model, this.state).value);
    this.raw.value = this.rawText;
    this.renderFieldMessages();
    this.renderNote();
  }

  private renderNote(): void {
    let text = 'Edits here update the form, and the other way round.';
    let tone = '';
    if (this.rawProblem) {
      text = this.rawProblem;
      tone = 'error';
    } else if (this.formFrozen) {
      text = this.formFrozen;
      tone = 'warn';
    } else if (!this.model) {
      text = 'This input can only be written as JSON.';
    }
    this.rawNote.textContent = text;
    this.rawNote.className = `raw-note small ${tone}`;
    this.raw.setAttribute('aria-invalid', this.rawProblem ? 'true' : 'false');
  }

  private renderForm(): void {
    if (!this.model) {
      replace(this.formEl, h('p', { class: 'muted small' }, this.formReason));
      return;
    }
    const focused = document.activeElement instanceof HTMLElement && this.formEl.contains(document.activeElement) ? document.activeElement.dataset.field : undefined;
    const fields = this.model.fields.map((f) => this.fieldEl(f));
    replace(this.formEl, this.formFrozen ? h('div', { class: 'form-frozen small' }, this.formFrozen) : null, h('fieldset', { disabled: !!this.formFrozen, class: 'plain' }, fields));
    this.renderFieldMessages();
    if (focused) this.formEl.querySelector<HTMLElement>(`[data-field="${CSS.escape(focused)}"]`)?.focus();
  }

  private renderFieldMessages(): void {
    if (!this.model) return;
    const enc = encode(this.model, this.state);
    for (const f of this.model.fields) {
      const slot = this.formEl.querySelector<HTMLElement>(`[data-msg-for="${CSS.escape(f.name)}"]`);
      if (!slot) continue;
      // An empty required field is not a mistake until the person tries to run.
      const early = (m: string | undefined) => (!this.attempted && (m === 'Required' || m === 'Choose one') ? undefined : m);
      const err = early(this.lastEdited === 'form' || !this.formFrozen ? enc.errors[f.name] : undefined);
      const warn = early(enc.warnings[f.name]);
      slot.textContent = visibleString(err ?? warn ?? '');
      slot.className = `field-msg ${err ? 'field-error' : warn ? 'field-warn' : ''}`;
      const input = this.formEl.querySelector(`[data-field="${CSS.escape(f.name)}"]`);
      input?.setAttribute('aria-invalid', err ? 'true' : 'false');
    }
  }

  private fieldEl(f: FieldSpec): HTMLElement {
    const id = uid('in');
    const msgId = `${id}-msg`;
    const v = this.state[f.name];
    const text = typeof v === 'string' ? v : '';
    const common = { id, 'data-field': f.name, 'aria-describedby': msgId, 'aria-required': f.required ? 'true' : undefined };
    let input: HTMLElement;
    switch (f.kind) {
      case 'text':
        input = h('input', { ...common, type: 'text', class: 'input', value: text, maxlength: undefined, oninput: (e: Event) => this.onField(f.name, (e.target as HTMLInputElement).value) });
        break;
      case 'textarea':
        input = h('textarea', { ...common, class: 'input', rows: '5', oninput: (e: Event) => this.onField(f.name, (e.target as HTMLTextAreaElement).value) });
        (input as HTMLTextAreaElement).value = text;
        break;
      case 'number':
      case 'integer':
        input = h('input', {
          ...common,
          type: 'number',
          class: 'input num-input',
          inputmode: f.kind === 'integer' ? 'numeric' : 'decimal',
          step: f.kind === 'integer' ? '1' : 'any',
          min: f.minimum !== undefined ? String(f.minimum) : undefined,
          max: f.maximum !== undefined ? String(f.maximum) : undefined,
          value: text,
          oninput: (e: Event) => this.onField(f.name, (e.target as HTMLInputElement).value),
        });
        break;
      case 'boolean': {
        const cb = h('input', { ...common, type: 'checkbox', checked: v === true, onchange: (e: Event) => this.onField(f.name, (e.target as HTMLInputElement).checked) });
        input = h(
          'span',
          { class: 'check-row' },
          cb,
          h('label', { for: id, class: 'muted small' }, v === null ? 'not set (left out)' : v ? 'true' : 'false'),
          !f.required && v !== null
            ? h('button', { type: 'button', class: 'btn ghost small', onclick: () => (this.onField(f.name, null), this.renderForm()) }, 'Leave out')
            : null,
        );
        cb.addEventListener('change', () => this.renderForm());
        break;
      }
      case 'enum':
        input = h(
          'select',
          { ...common, class: 'input', onchange: (e: Event) => this.onField(f.name, (e.target as HTMLSelectElement).value) },
          h('option', { value: '', selected: text === '' }, f.required ? 'Choose…' : '(leave out)'),
          (f.choices ?? []).map((c, i) => h('option', { value: String(i), selected: text === String(i) }, typeof c === 'string' ? c : JSON.stringify(c))),
        );
        break;
      case 'list':
        input = h('textarea', { ...common, class: 'input mono', rows: '4', placeholder: `One ${f.itemKind === 'enum' ? 'choice' : f.itemKind} per line`, oninput: (e: Event) => this.onField(f.name, (e.target as HTMLTextAreaElement).value) });
        (input as HTMLTextAreaElement).value = text;
        break;
      case 'json':
        input = h('textarea', { ...common, class: 'input mono', rows: '5', spellcheck: 'false', placeholder: 'JSON value', oninput: (e: Event) => this.onField(f.name, (e.target as HTMLTextAreaElement).value) });
        (input as HTMLTextAreaElement).value = text;
        break;
    }
    const typeHint = {
      text: 'text',
      textarea: 'text',
      number: 'number',
      integer: 'whole number',
      boolean: 'true / false',
      enum: 'choice',
      list: `list of ${f.itemKind === 'integer' ? 'whole numbers' : f.itemKind === 'enum' ? 'choices' : (f.itemKind ?? '') + 's'}, one per line`,
      json: 'JSON (nested value)',
    }[f.kind];
    const bounds: string[] = [];
    if (f.minimum !== undefined) bounds.push(`≥ ${f.minimum}`);
    if (f.maximum !== undefined) bounds.push(`≤ ${f.maximum}`);
    if (f.maxLength !== undefined) bounds.push(`≤ ${f.maxLength} chars`);
    if (f.maxItems !== undefined) bounds.push(`≤ ${f.maxItems} items`);
    return h(
      'div',
      { class: 'field' },
      h(
        'label',
        { for: f.kind === 'boolean' ? undefined : id, class: 'field-label' },
        h('code', { class: 'mono' }, f.name),
        f.required ? h('span', { class: 'req', title: 'required' }, ' *') : h('span', { class: 'muted small' }, ' optional'),
        h('span', { class: 'muted small type-hint' }, ` · ${typeHint}${bounds.length ? ' · ' + bounds.join(', ') : ''}`),
      ),
      f.description || f.title ? h('p', { class: 'field-help' }, f.description ?? f.title ?? '') : null,
      input,
      h('div', { id: msgId, class: 'field-msg', 'data-msg-for': f.name }),
    );
  }

  private async start(): Promise<void> {
    if (this.starting) return;
    this.error = null;
    this.attempted = true;
    this.renderFieldMessages();
    if (this.lastEdited === 'form' && this.model) {
      const enc = encode(this.model, this.state);
      if (Object.keys(enc.errors).length) {
        this.renderFieldMessages();
        this.error = new Error('Fix the fields marked in the form first, or write the input in the raw JSON editor.');
        this.renderStatus();
        (this.formEl.querySelector('[aria-invalid="true"]') as HTMLElement | null)?.focus();
        return;
      }
    }
    try {
      JSON.parse(this.raw.value);
    } catch (e) {
      this.error = new Error('The raw JSON is not valid: ' + (e instanceof Error ? e.message : String(e)));
      this.renderStatus();
      this.raw.focus();
      return;
    }
    this.starting = true;
    this.startBtn.disabled = true;
    this.startBtn.textContent = 'Starting…';
    this.runId = '';
    this.attemptId = '';
    this.lastStep = null;
    this.progress = undefined;
    this.result = '';
    this.renderStatus();
    try {
      const ws = this.workspace.value;
      const r = await api.StartRun({ skill: this.skill.name, input: this.raw.value, workspace: ws.trim() === '' ? '' : ws });
      this.runId = r.runId;
      if (ws.trim() !== '') this.renderRecent(saveRecent(ws));
    } catch (e) {
      this.error = e;
    } finally {
      this.starting = false;
      this.startBtn.disabled = false;
      this.startBtn.textContent = 'Run';
      this.renderStatus();
    }
  }

  private onRunEvent(e: RunEvent): void {
    if (!e || !this.runId || e.runId !== this.runId) return;
    if (e.attemptId && !this.attemptId) this.attemptId = e.attemptId;
    this.lastStep = e;
    if (e.type === 'progress' && e.detail && typeof e.detail === 'object') this.progress = e.detail as RunPanel['progress'];
    if (e.type === 'completed') this.result = (e.detail as { status?: string } | undefined)?.status ?? 'unknown';
    this.renderStatus();
  }

  private renderStatus(): void {
    if (this.error) {
      replace(this.statusEl, errorBox(this.error, 'Not started:'));
      return;
    }
    if (this.starting) {
      replace(this.statusEl, loading('Asking Gatehouse to start the run…'));
      return;
    }
    if (!this.runId) {
      replace(this.statusEl);
      return;
    }
    const link = this.attemptId ? h('a', { class: 'link', href: `#/runs/${encodeURIComponent(this.attemptId)}` }, 'Open in Runs →') : null;
    if (this.result) {
      const rs = runStatus(this.result);
      replace(this.statusEl, h('div', { class: 'run-result' }, badge(rs.label, rs.tone), h('span', null, rs.text), link));
      return;
    }
    const step = this.lastStep;
    replace(
      this.statusEl,
      h(
        'div',
        { class: 'run-started' },
        h('p', null, h('strong', null, 'Run requested. '), step ? `Now: ${runEventLabel(step.type)}.` : 'If your policy asks for approval, the consent dialog opens now.', ' ', h('code', { class: 'mono muted small' }, this.runId)),
        step && step.type !== 'proposed' && step.type !== 'decided' ? progressBar(this.progress, `${runEventLabel(step.type)}…`) : null,
        link,
      ),
    );
  }
}

