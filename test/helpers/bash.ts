import { spawn } from 'node:child_process';

/**
 * `bash -c command` with `input` on stdin and `env` added (in `cwd`, when given); proxies removed (curl must go straight to
 * loopback), and the variables the hooks read, so only `env` sets them.
 */
export function runBash(
  command: string,
  input: string,
  env: Record<string, string>,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const base = { ...process.env };
  for (const key of Object.keys(base))
    if (/_proxy$/i.test(key) || key === 'DEVSTREAM_TOKEN' || key === 'DEVSTREAM_HUB_URL') delete base[key];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { env: { ...base, ...env }, ...(cwd ? { cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: performance.now() - started }));
    child.stdin.end(input);
  });
}
