import { credentialOf, type Caller } from '../auth/scopes.js';
import { AppError, validationError } from '../errors.js';

/**
 * What a caller limited to projects and code graphs (`keys create --projects … --repos …`, or a
 * token's projects claim) may see: the one place each kind is decided. Reads pass
 * `visibleProjects` / `visibleRepos` to the queries as a filter (another project's rows then match
 * nothing, and an id of one is NOT_FOUND, as if absent); writes into another project or repo are
 * FORBIDDEN (`requireProject` / `requireRepo`). An unlimited caller (undefined) sees everything.
 */

/** The lower-cased project titles the caller may see, for a query's filter; undefined: every project. */
export function visibleProjects(caller: Caller): string[] | undefined {
  return caller.projects === undefined ? undefined : [...caller.projects];
}

/** The lower-cased repo names of the code graphs the caller may see; undefined: every graph. */
export function visibleRepos(caller: Caller): string[] | undefined {
  return caller.repos === undefined ? undefined : [...caller.repos];
}

/** Whether the caller may see the project titled `title` (any case); a row of no project only when unlimited. */
export function maySeeProject(caller: Caller, title: string | null | undefined): boolean {
  if (caller.projects === undefined) return true;
  return typeof title === 'string' && caller.projects.has(title.toLowerCase());
}

/** Whether the caller may see the code graph of `repo` (any case). */
export function maySeeRepo(caller: Caller, repo: string): boolean {
  return caller.repos === undefined || caller.repos.has(repo.toLowerCase());
}

const listed = (names: ReadonlySet<string>) => [...names].map((n) => `"${n}"`).join(', ');

/**
 * Throws FORBIDDEN unless the caller may write to the project titled `title`: an existing one or
 * one it would create (auto-creation outside the list is refused the same way).
 */
export function requireProject(caller: Caller, title: string, field = 'project'): void {
  if (maySeeProject(caller, title)) return;
  throw new AppError(
    'FORBIDDEN',
    `${field}: ${credentialOf(caller)} is limited to the projects ${listed(caller.projects!)}; "${title}" is not one of them`,
    { details: { field, projects: [...caller.projects!] } },
  );
}

/** Throws FORBIDDEN unless the caller may write the code graph of `repo` (an upload, an analysis). */
export function requireRepo(caller: Caller, repo: string, field = 'repo'): void {
  if (maySeeRepo(caller, repo)) return;
  throw new AppError(
    'FORBIDDEN',
    `${field}: ${credentialOf(caller)} is limited to the code graphs ${listed(caller.repos!)}; "${repo}" is not one of them`,
    { details: { field, repos: [...caller.repos!] } },
  );
}

/**
 * Throws FORBIDDEN unless the caller is limited to no project and no code graph: for what covers the
 * whole service at once (GET /metrics counts every project's requests, jobs and uploads), which a
 * limited admin is not an admin of.
 */
export function requireUnlimited(caller: Caller, what: string): void {
  if (caller.projects === undefined && caller.repos === undefined) return;
  throw new AppError(
    'FORBIDDEN',
    `${what} covers every project and code graph; ${credentialOf(caller)} is limited to some (an unlimited admin key, or METRICS_TOKEN, may read it)`,
    {
      details: {
        projects: caller.projects ? [...caller.projects] : null,
        repos: caller.repos ? [...caller.repos] : null,
      },
    },
  );
}

/**
 * The project a write goes to when the caller names none: DEFAULT_PROJECT, unless the caller is
 * limited to projects that do not include it; then its only project, when it has one; else
 * undefined (the caller must name one).
 */
export function defaultProjectFor(caller: Caller, defaultProject: string): string | undefined {
  if (maySeeProject(caller, defaultProject)) return defaultProject;
  return caller.projects!.size === 1 ? [...caller.projects!][0] : undefined;
}

/**
 * The project a write named, else the caller's default (defaultProjectFor), checked against the
 * caller's projects: FORBIDDEN for another project, VALIDATION_ERROR (naming `project`) when a
 * caller limited to several projects names none.
 */
export function writeProject(caller: Caller, named: string | undefined, defaultProject: string): string {
  if (named !== undefined) {
    requireProject(caller, named);
    return named;
  }
  const fallback = defaultProjectFor(caller, defaultProject);
  if (fallback === undefined) {
    throw validationError([
      {
        field: 'project',
        message: `name the project: ${credentialOf(caller)} is limited to the projects ${listed(caller.projects!)}, and DEFAULT_PROJECT ("${defaultProject}") is not one of them`,
      },
    ]);
  }
  return fallback;
}
