import type { ApiError } from './api';

/** A failed call's catalogue error, announced to screen readers. */
export function ErrorAlert({ error }: { error: ApiError | null }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error.code}: {error.message}
    </p>
  );
}
