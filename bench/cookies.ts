// What a browser keeps between requests, for the benchmarks that drive pages (console, portal): the cookie jar.

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
