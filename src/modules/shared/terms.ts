// Terms a merchant asks for (registrations and one-time orders), checked when they are created (docs/api.md "How we fill the gateway's gaps":
// byte limits of the interface counted in UTF-8, so a bad orderName fails now with a clear 400, not months later
// at charge time), and the parameters of the gateway's hosted window built from them.
import type { Config } from '../../config.ts';
import { utf8Bytes } from '../../lib/input.ts';
import { ValidationError } from '../../lib/errors.ts';
import { maskPhoneNumber } from '../../lib/redact.ts';
import type { GatewayWindow } from '../../gateway/gateway.ts';

export type Method = 'CARD' | 'MOBILE';

export interface Terms {
  userId?: string;
  method: Method;
  amount: number;
  orderName: string;
  itemCode?: string;
  userName?: string;
  userPhoneNumber?: string;
}

/**
 * Limits in bytes of UTF-8 of the billing payment request (docs/gateways.md "The gateway client") and of key issuance's echo fields;
 * the route schemas state the same limits (`Utf8Text`, src/modules/shared/schemas.ts).
 */
export const TERM_BYTES = { userId: 60, orderName: 100, itemCode: 10, userName: 20, userPhoneNumber: 20 } as const satisfies Partial<
  Record<keyof Terms, number>
>;
const BYTE_LIMITS = Object.entries(TERM_BYTES) as Array<[keyof Terms, number]>;

/** What a phone number the customer gives looks like (digits, spaces or hyphens, an optional leading +). */
export const PHONE_NUMBER_PATTERN = '^\\+?[0-9][0-9 -]{6,18}$';

export function validateTerms(terms: Terms, config: Config, options: { recurring: boolean }): void {
  for (const [field, limit] of BYTE_LIMITS) {
    const value = terms[field];
    if (typeof value === 'string' && utf8Bytes(value) > limit) {
      throw new ValidationError(`${field} is ${utf8Bytes(value)} bytes of UTF-8; the gateway allows at most ${limit}`);
    }
  }
  if (terms.orderName.trim() === '') throw new ValidationError('orderName must not be blank');
  if (terms.userPhoneNumber !== undefined && !new RegExp(PHONE_NUMBER_PATTERN).test(terms.userPhoneNumber)) {
    throw new ValidationError('userPhoneNumber must be a phone number (digits, spaces or hyphens)');
  }
  const max = config.amountMax[terms.method];
  if (max !== undefined && terms.amount > max) {
    throw new ValidationError(`amount ${terms.amount} is over the ${terms.method} maximum of ${max}`);
  }
  // MOBILE billing payments carry itemCode (docs/gateways.md "The gateway client"); a one-time confirmation does not.
  if (options.recurring && terms.method === 'MOBILE' && !terms.itemCode) throw new ValidationError('itemCode is required for MOBILE');
}

export function checkoutUrls(config: Config, flow: 'billing' | 'payments', state: string) {
  const query = `state=${encodeURIComponent(state)}`;
  return {
    successUrl: `${config.publicBaseUrl}/${flow}/success?${query}`,
    failUrl: `${config.publicBaseUrl}/${flow}/fail?${query}`,
  };
}

export interface WindowParams {
  paymentsMethod: Method;
  merchantId: string;
  orderId: string;
  orderName: string;
  amount: number;
  userId?: string;
  successUrl: string;
  failUrl: string;
  issueKeyOnly: boolean;
  itemCode?: string;
  userName?: string;
  /** Masked: responses never carry a customer's phone number (docs/api.md "Shapes"); the merchant has it already. */
  userPhoneNumber?: string;
  url?: string;
}

/**
 * Whether a Danal window opens at a URL the browser can be sent to: only the built-in sandbox's (gateway base URL
 * unset); the real gateway's window opens through its script on the merchant's page.
 */
export const windowHasUrl = (config: Config): boolean => !config.gateway.baseUrl;

/** What the gateway's JavaScript SDK takes; `url` (the sandbox's window page) only in sandbox mode. */
export function windowParams(config: Config, input: Terms & { orderId: string; successUrl: string; failUrl: string; issueKeyOnly: boolean }): WindowParams {
  const params: WindowParams = {
    paymentsMethod: input.method,
    merchantId: config.gateway.merchantId!,
    orderId: input.orderId,
    orderName: input.orderName,
    amount: input.amount,
    userId: input.userId,
    successUrl: input.successUrl,
    failUrl: input.failUrl,
    issueKeyOnly: input.issueKeyOnly,
  };
  if (input.itemCode) params.itemCode = input.itemCode;
  if (input.userName) params.userName = input.userName;
  if (input.userPhoneNumber) params.userPhoneNumber = maskPhoneNumber(input.userPhoneNumber);
  if (windowHasUrl(config)) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && key !== 'userPhoneNumber') query.set(key, String(value));
    }
    params.url = `${config.publicBaseUrl}/sandbox/window?${query}`;
  }
  return params;
}

/**
 * What a Toss registration's window takes (docs/api.md "Gateways"): the client key, our random customerKey and the
 * redirect URLs; `url` the page that opens Toss's billing authentication with them: the sandbox's window in
 * development, else our own page that loads Toss's script (TOSS_WINDOW_PATH). The client key is the adapter's
 * (TOSS_CLIENT_KEY, or the sandbox's own): absent only where no adapter was at hand (an event's copy).
 */
export interface TossWindowParams {
  gateway: 'TOSS';
  clientKey?: string;
  customerKey: string;
  successUrl: string;
  failUrl: string;
  url?: string;
  userPhoneNumber?: undefined;
}

/** Our page that opens Toss's billing authentication with Toss's own script, by the registration's state (registrations/toss-window.routes.ts). */
export const TOSS_WINDOW_PATH = '/billing/toss-window';

/** Where our window page of a registration is, as the customer's browser reaches it. */
export function tossWindowPageUrl(config: Config, state: string): string {
  return `${config.publicBaseUrl}${TOSS_WINDOW_PATH}/${encodeURIComponent(state)}`;
}

/**
 * Whether a gateway's window opens through our own page: it is opened by a client key (the adapter has a window) and
 * the gateway gives no page of its own for it (a sandbox's window has one). The one rule for both the registration's
 * `window.url` and whether our page serves it.
 */
export function opensThroughOurPage(window: GatewayWindow): boolean {
  return window.url === undefined;
}

export function tossWindowParams(
  window: GatewayWindow | undefined,
  input: { customerKey: string; successUrl: string; failUrl: string; ourPage: string },
): TossWindowParams {
  const params: TossWindowParams = { gateway: 'TOSS', customerKey: input.customerKey, successUrl: input.successUrl, failUrl: input.failUrl };
  if (!window) return params;
  params.clientKey = window.clientKey;
  if (opensThroughOurPage(window)) {
    params.url = input.ourPage;
  } else {
    const query = new URLSearchParams({ clientKey: window.clientKey, customerKey: input.customerKey, successUrl: input.successUrl, failUrl: input.failUrl });
    params.url = `${window.url}?${query}`;
  }
  return params;
}

/**
 * A registration's or order's public shape as events show it: without the single-use `state`, the URLs that carry
 * it, and the window's URLs and the customer's (masked) phone number.
 */
export function withoutCheckoutSecrets<T extends { state: string; successUrl: string; failUrl: string; window: WindowParams | TossWindowParams }>(shape: T) {
  const { state: _state, successUrl: _success, failUrl: _fail, window, ...rest } = shape;
  const { successUrl: _s, failUrl: _f, url: _u, userPhoneNumber: _p, ...terms } = window;
  return { ...rest, window: terms };
}
