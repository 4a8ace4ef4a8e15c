import type { Logger } from '../logger.js';
import type { AppError } from '../errors.js';

/** While the database is unreachable, one warning per this long, not one per request. */
const UNAVAILABLE_LOG_EVERY_MS = 5_000;

/**
 * The interval between two 503 warnings: `value` (DEVSTREAM_TEST_UNAVAILABLE_LOG_EVERY_MS, which only
 * tests set, to see each 503's warning in a service run as a child process) when it is a whole number
 * of milliseconds, else UNAVAILABLE_LOG_EVERY_MS. Not a setting: not in config.ts nor the README.
 */
export function unavailableLogEveryMs(value: string | undefined): number {
  return value !== undefined && /^\d{1,7}$/.test(value) ? Number(value) : UNAVAILABLE_LOG_EVERY_MS;
}

/** Who to blame: 5xx errors are the service's and are logged with their cause; 4xx are the caller's. */
function isServerFault(error: AppError): boolean {
  return error.status >= 500;
}

/**
 * Logs failed requests and tool calls when they are the service's fault: with their cause and stack
 * at error level, except for 503s (the database is unreachable), which are temporary, expected
 * during a restart and all alike: a warning every few seconds with the count of those not logged.
 * One per app (buildApp makes it; the REST error handler and the MCP tools share it), so the
 * throttle's state is the app's: two apps in one process (the tests) do not silence each other.
 */
export class FaultLog {
  private unavailableLoggedAt = -Infinity;
  private unavailableSuppressed = 0;

  /**
   * `now`: a monotonic clock in milliseconds (tests pass their own); `everyMs`: the interval between two
   * 503 warnings (tests that run the service as a child process shorten it: see main.ts).
   */
  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly everyMs: number = UNAVAILABLE_LOG_EVERY_MS,
  ) {}

  /** Logs `error` (the catalogue error `thrown` became) on `log`, with `bindings` (e.g. the tool's name). */
  log(
    log: Pick<Logger, 'warn' | 'error'>,
    error: AppError,
    thrown: unknown,
    bindings: Record<string, unknown> = {},
  ): void {
    if (!isServerFault(error) || error.code === 'SHUTTING_DOWN') return;
    if (error.status !== 503) {
      log.error({ ...bindings, err: thrown }, 'request failed');
      return;
    }
    const now = this.now();
    if (now - this.unavailableLoggedAt < this.everyMs) {
      this.unavailableSuppressed += 1;
      return;
    }
    // The driver's own words (ECONNREFUSED, 57P01 …) are the cause of the catalogue error.
    const cause = (error.cause ?? thrown) as { message?: string; code?: string } | undefined;
    log.warn(
      {
        ...bindings,
        code: error.code,
        cause: cause?.message,
        cause_code: cause?.code,
        similar_not_logged_since_last_warning: this.unavailableSuppressed,
      },
      `${error.message}: answering 503`,
    );
    this.unavailableLoggedAt = now;
    this.unavailableSuppressed = 0;
  }
}
