// The suite's safety nets, named once. No test relies on them to pass: every test and helper waits on a condition (a
// process's /ready, a row, a page's element, a child's exit), and these only bound how long a broken one hangs before
// it fails. They are generous on purpose: on a loaded 2-core machine (load 10-15) steps ran 3-10 times slower than on a
// quiet one, and a limit sized for a quiet machine turned into failures there.

/** A test, a hook, the global setup's teardown: test/vitest.config.ts. */
export const TEST_SAFETY_NET_MS = 5 * 60_000;

/**
 * One wait for one condition inside a test (waitFor, a process's readiness, a page's element or navigation, a child
 * process's run). Shorter than a test's net, so that a stuck wait fails naming what it waited for.
 */
export const WAIT_SAFETY_NET_MS = 2 * 60_000;

/**
 * PAYMENT_TIMEOUT_MS for the test apps whose tests make the gateway hold a call unanswered until the client gives up
 * (a `timeout` fault, which holds for minutes): the one budget a test cannot replace by a condition, since the client's
 * timeout is what it tests. Every other call of such an app is answered long before it on a loaded machine too (800 ms
 * was not, once, at load 16); a held call costs a test this long.
 */
export const GATEWAY_TIMEOUT_MS = 5_000;
