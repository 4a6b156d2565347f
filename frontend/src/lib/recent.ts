// Recently used workspaces for the Run form: most recent first, no
// duplicates, at most MAX_RECENT, kept in localStorage. Pure list logic
// plus a storage wrapper that never throws (a missing, full or hand-edited
// store reads as an empty list).

/** How many recent workspaces are kept. */
export const MAX_RECENT = 6;

/** The list with ws moved (or added) to the front; blank ws leaves it as it is. */
export function remember(list: readonly string[], ws: string, max = MAX_RECENT): string[] {
  if (ws.trim() === '') return [...list];
  return [ws, ...list.filter((x) => x !== ws)].slice(0, max);
}

/** Reads a stored list: only an array of non-empty strings counts, capped at max. */
export function parseRecent(text: string | null, max = MAX_RECENT): string[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    if (!Array.isArray(v)) return [];
    const out: string[] = [];
    for (const x of v) if (typeof x === 'string' && x.trim() !== '' && !out.includes(x)) out.push(x);
    return out.slice(0, max);
  } catch {
    return [];
  }
}

const KEY = 'gatehouse.recentWorkspaces';

/** The stored recent workspaces. */
export function loadRecent(store: Pick<Storage, 'getItem'> = localStorage): string[] {
  try {
    return parseRecent(store.getItem(KEY));
  } catch {
    return [];
  }
}

/** Stores ws as the most recent workspace and returns the new list. */
export function saveRecent(ws: string, store: Pick<Storage, 'getItem' | 'setItem'> = localStorage): string[] {
  const next = remember(loadRecent(store), ws);
  try {
    store.setItem(KEY, JSON.stringify(next));
  } catch {
    /* storage full or off: the list is only a convenience */
  }
  return next;
}
