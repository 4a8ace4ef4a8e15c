import type { Client } from '@modelcontextprotocol/client';

/** How long a notification may take before a test fails (a bound for failure only, not a timing claim). */
export const NOTIFICATION_WAIT_MS = 15_000;

/**
 * Resolves on the client's first `notifications/resources/list_changed` (with undefined) or
 * `notifications/resources/updated` (with its URI); rejects after NOTIFICATION_WAIT_MS naming `label`.
 * Register it before the change, so a notification that arrives first is not missed.
 */
export function nextResourceNotification(
  client: Client,
  method: 'notifications/resources/list_changed' | 'notifications/resources/updated',
  label: string,
): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label}: no ${method}`)), NOTIFICATION_WAIT_MS);
    const done = (uri: string | undefined) => {
      clearTimeout(timer);
      resolve(uri);
    };
    if (method === 'notifications/resources/updated')
      client.setNotificationHandler('notifications/resources/updated', (n) => done(n.params.uri));
    else client.setNotificationHandler('notifications/resources/list_changed', () => done(undefined));
  });
}
