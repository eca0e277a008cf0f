// The start-up banner of `npm start` (docs/operating.md "Commands"): where the operator console, the API document and,
// in development, the sandbox gateway's window are, and which clock the service runs on. One pino line carries it as
// fields, so that a log stays JSON lines; a terminal also gets it in a few lines for people.
import type { Config } from './config.ts';
import { SANDBOX_PREFIX } from './plugins/gateway.ts';

export interface StartupBanner {
  /** The operator console. */
  console: string;
  /** The API document (OpenAPI): the page; `/docs/json` is the document itself. */
  docs: string;
  /** The built-in sandbox gateway's hosted window, where a registration's window.url points; absent with a real gateway. */
  sandboxWindow?: string;
  /** CLOCK: the system's real time, or the simulated clock that PUT /admin/clock sets. */
  clock: Config['clock'];
}

/** Where things are, on the address customers' and operators' browsers use (PUBLIC_BASE_URL). */
export function startupBanner(config: Pick<Config, 'publicBaseUrl' | 'clock' | 'gateway'>): StartupBanner {
  const base = config.publicBaseUrl;
  return {
    console: `${base}/console`,
    docs: `${base}/docs`,
    ...(config.gateway.baseUrl === undefined ? { sandboxWindow: `${base}${SANDBOX_PREFIX}/window` } : {}),
    clock: config.clock,
  };
}

/** The same, in a few lines for a person at a terminal. */
export function bannerText(banner: StartupBanner): string {
  const lines = [
    '',
    'Merchant billing service is ready.',
    `  Operator console   ${banner.console}`,
    `  API document       ${banner.docs}`,
    ...(banner.sandboxWindow ? [`  Sandbox window     ${banner.sandboxWindow} (where a registration's window.url sends the customer)`] : []),
    `  Clock              ${banner.clock === 'simulated' ? 'simulated: PUT /admin/clock sets it' : 'real time'}`,
    '',
  ];
  return `${lines.join('\n')}\n`;
}
