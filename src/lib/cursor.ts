import { createHmac, timingSafeEqual } from 'node:crypto';

export type CursorValue = string | number;

/** A keyset position: the sort values of the last row (instants as ISO strings) and its id. */
export interface CursorPosition {
  mode: string;
  values: CursorValue[];
  id: string;
}

function sign(payload: string, key: Buffer): string {
  return createHmac('sha256', key).update(payload).digest('base64url').slice(0, 16);
}

/** Opaque cursor: base64url JSON plus a truncated HMAC so that an edited cursor is refused. */
export function encodeCursor(position: CursorPosition, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify([position.mode, position.values, position.id])).toString('base64url');
  return `${payload}.${sign(payload, key)}`;
}

export function decodeCursor(cursor: string, key: Buffer): CursorPosition | null {
  const dot = cursor.indexOf('.');
  if (dot <= 0) return null;
  const payload = cursor.slice(0, dot);
  const mac = Buffer.from(cursor.slice(dot + 1));
  const expected = Buffer.from(sign(payload, key));
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!Array.isArray(parsed) || parsed.length !== 3) return null;
    const [mode, values, id] = parsed as unknown[];
    if (typeof mode !== 'string' || typeof id !== 'string' || !Array.isArray(values)) return null;
    if (!values.every((v) => typeof v === 'string' || typeof v === 'number')) return null;
    return { mode, values: values as CursorValue[], id };
  } catch {
    return null;
  }
}
