// Signing in to the operator console without a browser (app.inject), as a browser would: the login form's CSRF token
// and cookie, then the admin token; answers the Cookie header of the session for the next requests.
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';

function cookieHeader(setCookie: string | string[] | undefined): string {
  return ([] as string[])
    .concat(setCookie ?? [])
    .map((line) => line.split(';')[0])
    .join('; ');
}

export async function consoleCookie(app: App, token: string): Promise<string> {
  const form = await app.inject({ method: 'GET', url: '/console/login' });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1];
  if (!csrf) throw new Error('the login form has no CSRF token');
  const csrfCookie = cookieHeader(form.headers['set-cookie'] as string[] | undefined);
  const response = await app.inject({
    method: 'POST',
    url: '/console/login',
    headers: { cookie: csrfCookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: csrf, token }).toString(),
  });
  if (response.statusCode !== 303) throw new Error(`sign-in answered ${response.statusCode}`);
  return [csrfCookie, cookieHeader(response.headers['set-cookie'] as string[] | undefined)].filter(Boolean).join('; ');
}

/** The CSRF token and idempotency key of the form posting to `action` on a page's HTML. */
export function formFields(html: string, action: string): { _csrf: string; idempotencyKey: string } {
  const form = html.slice(html.indexOf(`action="${action}"`));
  const value = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(form)?.[1] ?? '';
  return { _csrf: value('_csrf'), idempotencyKey: value('idempotencyKey') };
}

/** The text of the element with `id` on a page's HTML, tags dropped and white space folded. */
export function textOf(html: string, id: string): string {
  const start = html.indexOf(`id="${id}"`);
  expect(start, `no #${id} on the page`).toBeGreaterThan(-1);
  const open = html.lastIndexOf('<', start);
  const tag = /^<(\w+)/.exec(html.slice(open))![1]!;
  const end = html.indexOf(`</${tag}>`, start);
  return html
    .slice(html.indexOf('>', start) + 1, end)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
