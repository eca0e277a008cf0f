// What a browser keeps between requests, for the benchmarks that drive pages (console, portal): the cookie jar, and the
// console's sign-in.
import { BENCH_ADMIN_TOKEN } from './service-process.ts';

/** The Set-Cookie headers of a response as one Cookie header (name=value pairs). */
export function cookiesOf(response: Response, jar: Map<string, string>): Map<string, string> {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const at = pair!.indexOf('=');
    jar.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
  }
  return jar;
}
export const cookieHeader = (jar: Map<string, string>) => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');

/** Signs in through the login form, as a browser does: its CSRF cookie and token, then the admin token. */
export async function signIn(base: string): Promise<string> {
  const jar = new Map<string, string>();
  const form = await fetch(`${base}/console/login`);
  cookiesOf(form, jar);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!csrf) throw new Error('the login form has no CSRF token');
  const response = await fetch(`${base}/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookieHeader(jar) },
    body: new URLSearchParams({ _csrf: csrf, token: BENCH_ADMIN_TOKEN, next: '/console' }).toString(),
    redirect: 'manual',
  });
  if (response.status !== 303) throw new Error(`sign-in answered ${response.status}: ${await response.text()}`);
  cookiesOf(response, jar);
  if (!jar.has('console_session')) throw new Error('sign-in set no session cookie');
  return cookieHeader(jar);
}
