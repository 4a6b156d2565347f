import { afterEach, describe, expect, it, vi } from 'vitest';
import apiDoc from '../../../docs/api.md?raw';
import { api, ApiError, METHODS, toApiError } from './client';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('METHODS', () => {
  it('lists the methods of docs/api.md in table order', () => {
    const table = apiDoc.slice(apiDoc.indexOf('## Methods'), apiDoc.indexOf('## Types'));
    const names = [...table.matchAll(/^\| ([A-Z][A-Za-z]+) \|/gm)].map((m) => m[1]);
    expect(names.length).toBeGreaterThan(10);
    expect([...METHODS]).toEqual(names);
  });

  it('exposes one client function per method', () => {
    for (const m of METHODS) expect(typeof api[m]).toBe('function');
  });
});

describe('browser transport', () => {
  it('POSTs JSON to /api/<Method>, never with cookies', async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify({ runId: 'r1' }), { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    const out = await api.StartRun({ skill: 's', input: '{"a":1}', workspace: '' });
    expect(out).toEqual({ runId: 'r1' });
    expect(fetch).toHaveBeenCalledWith('/api/StartRun', {
      method: 'POST',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ skill: 's', input: '{"a":1}', workspace: '' }),
    });
  });

  it("sends the tab's sessionStorage token as a bearer header", async () => {
    vi.stubGlobal('sessionStorage', { getItem: (k: string) => (k === 'gatehouse.token' ? 'abc123' : null) });
    const fetch = vi.fn(async () => new Response('{"runs":[],"active":[]}', { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    await api.ListRuns({});
    const init = (fetch.mock.calls[0] as unknown as [string, RequestInit])[1];
    expect(init.headers).toEqual({ 'Content-Type': 'application/json', Authorization: 'Bearer abc123' });
    expect(init.credentials).toBe('omit');
  });

  it('sends {} for methods without arguments', async () => {
    const fetch = vi.fn(async () => new Response('{"version":"1","dataDir":"/d","shell":"browser"}'));
    vi.stubGlobal('fetch', fetch);
    await api.AppInfo({});
    expect((fetch.mock.calls[0] as unknown as [string, RequestInit])[1].body).toBe('{}');
  });

  it('turns structured errors into ApiError', async () => {
    const body = { error: true, code: 'invalid_policy', category: 'invalid_input', message: 'bad', details: [{ code: 'x', path: '$.mode', message: 'm' }] };
    vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify(body), { status: 400 })));
    const err = await api.SetPolicy({ policy: { mode: 'ask', safeMode: false, trusted: [] } }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'invalid_policy', category: 'invalid_input', message: 'bad', status: 400 });
    expect(err.details).toEqual(body.details);
  });

  it('reports non-JSON failures and transport errors', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('forbidden origin', { status: 403 })));
    await expect(api.ListRuns({})).rejects.toMatchObject({ code: 'http_403', category: 'auth', message: 'forbidden origin' });
    vi.stubGlobal('fetch', vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))));
    await expect(api.ListRuns({})).rejects.toMatchObject({ code: 'unreachable', category: 'transport' });
  });
});

describe('desktop transport', () => {
  it('calls window.go.app.Facade[Method](args) when Wails is present', async () => {
    const Decide = vi.fn(async (a: unknown) => ({ id: 'p1', echo: a }));
    const fetch = vi.fn();
    vi.stubGlobal('fetch', fetch);
    vi.stubGlobal('window', { go: { app: { Facade: { Decide } } } });
    const out = await api.Decide({ proposalId: 'p1', approve: false });
    expect(Decide).toHaveBeenCalledWith({ proposalId: 'p1', approve: false });
    expect(out).toMatchObject({ id: 'p1' });
    expect(fetch).not.toHaveBeenCalled();
  });

  it('decodes rejected promises carrying the structured error', async () => {
    const SetSkillRoots = vi.fn(async () => {
      throw JSON.stringify({ error: true, code: 'invalid_roots', category: 'invalid_input', message: 'no', details: [{ code: 'missing', path: '$.roots[0]', message: 'm' }] });
    });
    vi.stubGlobal('window', { go: { app: { Facade: { SetSkillRoots } } } });
    await expect(api.SetSkillRoots({ roots: ['/x'] })).rejects.toMatchObject({ code: 'invalid_roots', details: [{ path: '$.roots[0]' }] });
  });

  it('keeps plain-text rejections as messages', () => {
    expect(toApiError('boom')).toMatchObject({ code: 'error', message: 'boom' });
    expect(toApiError(new Error('{"code":"x","category":"c","message":"m"}'))).toMatchObject({ code: 'x', category: 'c', message: 'm' });
  });
});
