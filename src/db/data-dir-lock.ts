import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The lock file's name inside a PGlite data folder. */
export const LOCK_FILE = 'devstream-hub.lock';

/** What the lock file holds: enough to tell whether its owner still runs, and to name it. */
interface LockOwner {
  pid: number;
  /** The process's start time (Linux: clock ticks since boot), so that a reused pid is not taken for the owner. */
  startTime: string | null;
  hostname: string;
  startedAt: string;
}

/** A held lock: `release()` removes the file if it is still ours (idempotent). */
export interface DataDirLock {
  path: string;
  release(): void;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command, which may hold spaces); null off Linux. */
function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isRunning(owner: LockOwner): boolean {
  if (owner.pid === process.pid) return false; // a lock left by an earlier process that had our pid (a container restart)
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false; // ESRCH: no such process
  }
  const now = processStartTime(owner.pid);
  return owner.startTime === null || now === null || now === owner.startTime;
}

function readOwner(path: string): LockOwner | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockOwner>;
    return typeof parsed.pid === 'number' && Number.isInteger(parsed.pid) && parsed.pid > 0
      ? {
          pid: parsed.pid,
          startTime: parsed.startTime ?? null,
          hostname: parsed.hostname ?? '?',
          startedAt: parsed.startedAt ?? '?',
        }
      : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
    return null; // unreadable or half-written: no owner can be named, so it is stale
  }
}

/** Start-up refused: another process holds the data folder. */
export class DataDirInUseError extends Error {
  override readonly name = 'DataDirInUseError';
}

function inUse(dataDir: string, owner: LockOwner): DataDirInUseError {
  return new DataDirInUseError(
    `the PGlite data folder ${dataDir} is in use by process ${owner.pid} on ${owner.hostname} (since ${owner.startedAt}): ` +
      'one process at a time may open it. Stop that process first, or set DATA_DIR to another folder ' +
      `(if no such process runs, delete ${join(dataDir, LOCK_FILE)})`,
  );
}

/**
 * Takes the lock of an embedded PGlite data folder, so that one process at a time opens it: two
 * PGlite instances on one folder each see only their own writes, and one overwrites the other's.
 * The lock is a file created exclusively (`O_EXCL`) holding the owner's pid and start time. A lock
 * whose owner no longer runs (killed, crashed, a machine or container restart) is taken over; a
 * live owner is refused with a DataDirInUseError naming the folder and the pid. Released by
 * `release()` and, failing that, when the process exits.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const dataDir = resolve(dir);
  const path = join(dataDir, LOCK_FILE);
  const me: LockOwner = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    hostname: hostname(),
    startedAt: new Date().toISOString(),
  };
  const mine = JSON.stringify(me);
  let tookOver = false;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      try {
        writeSync(fd, mine);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw error;
      let owner: LockOwner | null;
      try {
        owner = readOwner(path);
      } catch {
        continue; // released meanwhile: try again
      }
      if (owner && isRunning(owner)) throw inUse(dataDir, owner);
      try {
        unlinkSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
      tookOver = true;
      continue;
    }
    if (tookOver) {
      // Two processes taking over the same stale lock at once could each remove the other's new
      // file: after a take-over, the one whose pid the file still holds a moment later owns it.
      await sleep(100);
      let owner: LockOwner | null = null;
      try {
        owner = readOwner(path);
      } catch {
        /* removed: not ours */
      }
      if (!owner || owner.pid !== me.pid || owner.startTime !== me.startTime) {
        if (owner) throw inUse(dataDir, owner);
        continue;
      }
    }
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      process.off('exit', release);
      try {
        if (readFileSync(path, 'utf8') === mine) unlinkSync(path);
      } catch {
        /* gone already */
      }
    };
    process.on('exit', release);
    return { path, release };
  }
}
