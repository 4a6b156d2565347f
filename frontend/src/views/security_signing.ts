// Security → Evidence signing: this installation's Ed25519 public key
// (made on first use; the private key stays in the data directory's
// signing/ folder, never in the database and never sent here), its
// fingerprint, PEM export and rotation, and the public keys of other
// installations the person trusts. The backend decides what verifies;
// this only shows keys and sends the person's choices.

import { api } from '../api/client';
import type { SigningKey, SigningKeys } from '../api/types';
import { downloadText } from '../evidence/asciicast';
import { h, icon } from '../lib/dom';
import { badge, card, codeBlock, copyButton, emptyState, errorBox, loading } from '../lib/ui';
import { savedNote, SettingsSection } from './settings_section';

export function signingSection(root: HTMLElement) {
  let keys: SigningKeys | null = null;
  let busy = '';
  let err: unknown = null;
  let done = '';
  let pem = '';
  let confirmRotate = false;
  const sec = new SettingsSection(root, {
    fetch: async () => {
      keys = await api.SigningKeys({});
    },
    view,
    dirty: () => pem.trim() !== '',
  });
  const render = () => sec.render();

  async function act(what: string, send: () => Promise<SigningKeys>, ok: string): Promise<void> {
    busy = what;
    err = null;
    done = '';
    render();
    try {
      keys = await send();
      done = ok;
      if (what === 'trust') pem = '';
    } catch (e) {
      err = e;
    } finally {
      busy = '';
      confirmRotate = false;
      render();
    }
  }

  function keyRow(k: SigningKey, own: boolean): HTMLElement {
    return h(
      'li',
      { class: 'stack signing-key', 'data-testid': own ? 'signing-key' : 'trusted-key', dataset: { fingerprint: k.fingerprint } },
      h(
        'div',
        { class: 'row wrap' },
        h('code', { class: 'mono', 'data-testid': 'signing-fingerprint' }, k.fingerprint),
        copyButton(k.fingerprint, 'fingerprint'),
        own ? (k.current ? badge('current', 'ok', 'New attestations are signed with this key') : badge('rotated', 'neutral', 'No longer signs; what it signed still verifies as this installation')) : badge('trusted', 'info'),
        h(
          'button',
          { type: 'button', class: 'btn small ghost', 'data-testid': own ? 'signing-export-pem' : undefined, onclick: () => downloadText(`gatehouse-${own ? 'installation' : 'trusted'}-${k.fingerprint.slice(7, 15).replace(/[^A-Za-z0-9]/g, '_')}.pub.pem`, k.pem, 'application/x-pem-file') },
          icon('down'),
          'Export PEM',
        ),
        own
          ? null
          : h(
              'button',
              { type: 'button', class: 'btn small ghost', 'data-testid': 'untrust-key', disabled: !!busy, onclick: () => void act('untrust', () => api.UntrustSigningKey({ fingerprint: k.fingerprint }), `Stopped trusting ${k.fingerprint}.`) },
              'Stop trusting',
            ),
      ),
      own && k.current ? codeBlock(k.pem, { testid: 'signing-pem', label: 'Public key (PEM)' }) : null,
    );
  }

  function view(): HTMLElement {
    if (sec.loadError) return card('Evidence signing', {}, errorBox(sec.loadError, 'Could not read the signing keys.'));
    if (!keys) return card('Evidence signing', {}, loading('Reading the signing keys…'));
    const own = keys.installation ?? [];
    const trusted = keys.trusted ?? [];
    const body = h(
      'div',
      { class: 'stack' },
      h('h3', { class: 'small' }, 'This installation'),
      h('ul', { class: 'plain stack' }, own.map((k) => keyRow(k, true))),
      h(
        'div',
        { class: 'row wrap' },
        h(
          'button',
          {
            type: 'button',
            class: ['btn', 'small', confirmRotate ? 'danger' : ''],
            'data-testid': 'signing-rotate',
            disabled: !!busy,
            onclick: () => {
              if (!confirmRotate) {
                confirmRotate = true;
                render();
                return;
              }
              void act('rotate', () => api.RotateSigningKey({}), 'A new signing key is in use; the old public key stays listed, so what it signed still verifies.');
            },
          },
          busy === 'rotate' ? 'Rotating…' : confirmRotate ? 'Confirm: rotate the signing key' : 'Rotate key…',
        ),
        h('span', { class: 'muted small' }, 'Rotation makes a new key pair and deletes the old private key. Others who trust the old public key must add the new one.'),
      ),
      h('h3', { class: 'small' }, 'Trusted keys of other installations'),
      trusted.length
        ? h('ul', { class: 'plain stack' }, trusted.map((k) => keyRow(k, false)))
        : emptyState('No trusted keys', 'Evidence attested by another installation shows as "signed by <fingerprint>" once its public key is added here.'),
      h(
        'form',
        {
          class: 'stack',
          onsubmit: (e: Event) => {
            e.preventDefault();
            void act('trust', () => api.TrustSigningKey({ pem }), 'Key trusted.');
          },
        },
        h('label', { for: 'trust-pem' }, 'Public key to trust (PEM, from "gatehouse evidence key show --pem" on the other machine)'),
        h('textarea', { id: 'trust-pem', class: 'input mono', rows: '4', spellcheck: 'false', 'data-testid': 'trust-pem', placeholder: '-----BEGIN PUBLIC KEY-----', value: pem, oninput: (e: Event) => (pem = (e.target as HTMLTextAreaElement).value) }),
        h('div', null, h('button', { type: 'submit', class: 'btn small', 'data-testid': 'trust-add', disabled: !!busy }, busy === 'trust' ? 'Adding…' : 'Trust this key')),
      ),
      err ? errorBox(err, 'Nothing was changed:') : null,
      done ? savedNote('signing-done', done) : null,
    );
    return card(
      'Evidence signing',
      {
        description:
          "Export attestation signs an in-toto attestation (DSSE, Ed25519) of an Evidence file with this installation's key. Anyone with the public key can check it, with gatehouse evidence verify --attestation or cosign verify-blob-attestation. The private key stays in the data directory (signing/current.key, readable by you only).",
      },
      body,
    );
  }

  const ready = sec.load();
  return { ready, reload: () => sec.external() };
}
