// The customer portal without a browser (app.inject), as a browser would use it: a session made through the merchant
// API, its link opened (the cookie kept), pages read with the cookies they set, and their forms posted back.
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import { apiHeaders } from './app.ts';

/** Cookies as a browser keeps them: by name, the latest Set-Cookie winning. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: { headers: Record<string, unknown> }): void {
    for (const line of ([] as string[]).concat((response.headers['set-cookie'] as string | string[] | undefined) ?? [])) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
  }
  get header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export async function createPortalSession(app: App, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/api/v1/portal-sessions', headers: { ...apiHeaders, ...headers }, payload: body });
}

/** A session for `userId` opened as its link's first GET: the jar holds the portal cookie; `location` is where it sent the browser. */
export async function openPortal(app: App, body: Record<string, unknown>): Promise<{ jar: CookieJar; location: string; id: string }> {
  const created = await createPortalSession(app, body);
  expect(created.statusCode, created.body).toBe(201);
  const { id, url } = created.json() as { id: string; url: string };
  const opened = await app.inject({ method: 'GET', url: new URL(url).pathname });
  expect(opened.statusCode, opened.body).toBe(303);
  const jar = new CookieJar();
  jar.take(opened);
  return { jar, location: String(opened.headers.location), id };
}

export async function getPage(app: App, jar: CookieJar, url: string) {
  const response = await app.inject({ method: 'GET', url, headers: { cookie: jar.header } });
  jar.take(response);
  return response;
}

/** The CSRF token and idempotency key of the form posting to `action` on a page's HTML (the layout's token for others). */
export function formOf(html: string, action: string): { _csrf: string; idempotencyKey: string } {
  const at = html.indexOf(`action="${action}"`);
  expect(at, `a form posting to ${action}`).toBeGreaterThan(-1);
  const form = html.slice(at);
  const value = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(form)?.[1] ?? '';
  return { _csrf: value('_csrf'), idempotencyKey: value('idempotencyKey') };
}

export async function postForm(app: App, jar: CookieJar, action: string, fields: Record<string, string>) {
  const response = await app.inject({
    method: 'POST',
    url: action,
    headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
  jar.take(response);
  return response;
}
