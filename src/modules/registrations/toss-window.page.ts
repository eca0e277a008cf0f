// Our page that opens Toss's billing authentication (docs/api.md "Gateways"): a Toss registration's `window.url`
// against the real Toss. Toss's window is opened only by Toss's JavaScript SDK, in the customer's browser, with the
// client key (public: it is made to be handed to browsers), the registration's customerKey and its redirect URLs; the
// secret key never leaves the server. The page loads the SDK, calls requestBillingAuth at once, and says so in the
// reader's language (Korean first; words from the i18n catalogs): a script that does not load, a window closed or
// refused leave a message and a button to try again; without JavaScript a <noscript> text says the window needs it.
//
// Toss facts. Documented (docs.tosspayments.com, "SDK v2" and the billing guide): the script is
// https://js.tosspayments.com/v2/standard and defines window.TossPayments;
// TossPayments(clientKey).payment({ customerKey }).requestBillingAuth({ method: 'CARD', successUrl, failUrl }) opens
// the card window, which sends the browser to successUrl with customerKey and authKey, or to failUrl with code and
// message; its promise rejects with a `code` (USER_CANCEL: the customer closed the window). Assumed (Toss publishes
// no list, and nothing here reaches Toss): the window's frames, images and calls are all on *.tosspayments.com.
//
// The page's one script is inline and constant: the Content-Security-Policy allows it by its hash, and Toss's script
// origin, and nothing else; the terms travel in a JSON data block the browser never runs.
import { createHash } from 'node:crypto';
import { type Locale, speech } from '../i18n/messages.ts';

export const TOSS_SDK_URL = 'https://js.tosspayments.com/v2/standard';
const TOSS_ORIGINS = 'https://*.tosspayments.com';

/** What the page hands Toss's SDK: nothing secret (the client key is public, the rest is the registration's own). */
export interface TossWindowTerms {
  clientKey: string;
  customerKey: string;
  successUrl: string;
  failUrl: string;
}

// Shows one message of #status (by data-state) at a time; the buttons appear where the customer can act. A script
// that has not loaded after LOAD_WAIT_MS counts as not loaded (a phone on a dead network may never fire onerror);
// should it still arrive, it is ignored: the window opens once per click, never twice by itself.
const SCRIPT = `(function () {
  var LOAD_WAIT_MS = 20000;
  var terms = JSON.parse(document.getElementById('toss-window-terms').textContent);
  var status = document.getElementById('status');
  var retry = document.getElementById('retry');
  var open = document.getElementById('open');
  var attempt = 0;
  function show(state, button) {
    for (var i = 0; i < status.children.length; i++) status.children[i].hidden = status.children[i].getAttribute('data-state') !== state;
    retry.hidden = button !== retry;
    open.hidden = button !== open;
  }
  function openWindow() {
    show('opening');
    try {
      window.TossPayments(terms.clientKey).payment({ customerKey: terms.customerKey })
        .requestBillingAuth({ method: 'CARD', successUrl: terms.successUrl, failUrl: terms.failUrl })
        .catch(function (error) { show(error && error.code === 'USER_CANCEL' ? 'closed' : 'failed', open); });
    } catch (error) {
      show('failed', open);
    }
  }
  function load() {
    var mine = ++attempt;
    show('loading');
    var script = document.createElement('script');
    var timer = setTimeout(function () { if (mine === attempt) { attempt++; show('unavailable', retry); } }, LOAD_WAIT_MS);
    script.onload = function () {
      clearTimeout(timer);
      if (mine !== attempt) return;
      if (typeof window.TossPayments === 'function') openWindow(); else show('unavailable', retry);
    };
    script.onerror = function () {
      clearTimeout(timer);
      script.remove();
      if (mine === attempt) show('unavailable', retry);
    };
    script.src = terms.sdkUrl;
    document.head.appendChild(script);
  }
  retry.addEventListener('click', load);
  open.addEventListener('click', openWindow);
  load();
})();`;

const SCRIPT_HASH = `'sha256-${createHash('sha256').update(SCRIPT, 'utf8').digest('base64')}'`;

/**
 * The page's Content-Security-Policy (helmet's directives): its own script by hash and Toss's script origin; Toss's
 * frames, images and calls; inline styles (ours, and any the SDK adds); no plugin, no base URL, never framed itself.
 */
export const TOSS_WINDOW_CSP = {
  'default-src': ["'self'"],
  'script-src': [SCRIPT_HASH, 'https://js.tosspayments.com'],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:', TOSS_ORIGINS],
  'connect-src': ["'self'", TOSS_ORIGINS],
  'frame-src': [TOSS_ORIGINS],
  'form-action': ["'self'", TOSS_ORIGINS],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'frame-ancestors': ["'none'"],
};

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON inside a <script type="application/json"> block: nothing in it can close the block or start markup. */
const jsonBlock = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

const STYLE = `body{font-family:system-ui,-apple-system,'Apple SD Gothic Neo','Malgun Gothic',sans-serif;margin:0;color:#1b1b1b;line-height:1.6;word-break:keep-all;overflow-wrap:anywhere}
main{max-width:30rem;margin:0 auto;padding:1.5rem 1.25rem 3rem}h1{font-size:1.35rem;line-height:1.4;margin:.5rem 0 1rem}
.lang{text-align:right;margin:0}.lang a{color:#0b57d0}.problem{border-left:4px solid #b3261e;padding:.25rem .75rem;background:#fdf3f2}
#status p{margin:1rem 0}button{font:inherit;font-size:1.05rem;min-height:3rem;width:100%;padding:.6rem 1rem;border-radius:.5rem;border:0;background:#0b57d0;color:#fff;cursor:pointer}
button:focus-visible,a:focus-visible{outline:3px solid #1b1b1b;outline-offset:2px}`;

function frame(locale: Locale, title: string, switchHref: string, body: string): string {
  const { t } = speech(locale);
  const other: Locale = locale === 'ko' ? 'en' : 'ko';
  return `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><link rel="icon" href="data:,"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>
<p class="lang"><a href="${escapeHtml(switchHref)}" lang="${other}" hreflang="${other}">${escapeHtml(t('common.switchLanguage'))}</a></p>
${body}</main>`;
}

/** The page that opens Toss's card window for a pending registration. `switchHref`: the same page in the other language. */
export function renderTossWindowPage(locale: Locale, terms: TossWindowTerms, switchHref: string): string {
  const { t } = speech(locale);
  const message = (state: string, key: Parameters<typeof t>[0]) => `<p data-state="${state}" hidden>${escapeHtml(t(key))}</p>`;
  const body = `<h1>${escapeHtml(t('checkout.tossWindow.heading'))}</h1>
<p>${escapeHtml(t('checkout.tossWindow.intro'))}</p>
<noscript><p class="problem">${escapeHtml(t('checkout.tossWindow.noscript'))}</p></noscript>
<div id="status" role="status" aria-live="polite">${[
    message('loading', 'checkout.tossWindow.loading'),
    message('opening', 'checkout.tossWindow.opening'),
    message('unavailable', 'checkout.tossWindow.unavailable'),
    message('closed', 'checkout.tossWindow.closed'),
    message('failed', 'checkout.tossWindow.failed'),
  ].join('')}</div>
<button type="button" id="retry" hidden>${escapeHtml(t('checkout.tossWindow.retry'))}</button>
<button type="button" id="open" hidden>${escapeHtml(t('checkout.tossWindow.open'))}</button>`;
  const data = { ...terms, sdkUrl: TOSS_SDK_URL };
  return `${frame(locale, t('checkout.tossWindow.title'), switchHref, body)}
<script type="application/json" id="toss-window-terms">${jsonBlock(data)}</script>
<script>${SCRIPT}</script></body></html>`;
}

/** Why the page cannot open the window: an unknown link, an expired one, or a registration already finished. */
export type TossWindowRefusal = 'NOT_FOUND' | 'EXPIRED' | 'USED';

const REFUSALS = {
  NOT_FOUND: ['checkout.tossWindow.notFoundHeading', 'checkout.tossWindow.startAgain'],
  EXPIRED: ['checkout.tossWindow.expiredHeading', 'checkout.tossWindow.startAgain'],
  USED: ['checkout.tossWindow.usedHeading', 'checkout.tossWindow.seeMerchant'],
} as const;

export function renderTossWindowRefusal(locale: Locale, refusal: TossWindowRefusal, switchHref: string): string {
  const { t } = speech(locale);
  const [heading, text] = REFUSALS[refusal];
  return `${frame(locale, t(heading), switchHref, `<h1>${escapeHtml(t(heading))}</h1><p>${escapeHtml(t(text))}</p>`)}</body></html>`;
}
