// Builds one language's engine (go/cue or go/rego) to WebAssembly (GOOS=wasip1, a reactor) and
// puts it, with a manifest.json (its size and SHA-256), in the directory given:
//   node ../policy-engines/scripts/build-engines.ts cue engines
// is the build of @signet/policy-engine-cue (and likewise -rego: one package per language, ADR 26).
// Builds are cached outside the repository by what determines them (the Go sources, go.mod,
// go.sum, the Go version and the flags), under
// $SIGNET_CACHE_DIR (default ~/.cache/signet)/policy-engines/<key>/: a warm machine copies, a
// fresh one builds (about a minute on two cores) with a progress line every 15 s.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const LANGUAGES = ['cue', 'rego'] as const;
type Language = (typeof LANGUAGES)[number];
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const GO_DIR = join(PACKAGE_DIR, 'go');
// -s -w: no debug information (a third smaller); -trimpath, -buildvcs=false: the output depends on
// the sources and the Go version only; -mod=readonly: go.sum is complete, nothing is resolved.
const FLAGS = ['-buildmode=c-shared', '-trimpath', '-buildvcs=false', '-mod=readonly', '-ldflags=-s -w'];
const HEARTBEAT_MS = 15_000;
const BUILD_TIMEOUT_MS = 30 * 60_000;

const log = (line: string) => process.stdout.write(`policy-engines: ${line}\n`);

function run(args: readonly string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, { cwd: GO_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-32 * 1024);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), BUILD_TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`could not run go (is Go 1.26+ on PATH?): ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`go ${args.join(' ')} failed (${signal ?? `exit code ${code}`}):\n${output}`));
    });
  });
}

async function goSources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && (entry.name.endsWith('.go') || /^go\.(mod|sum)$/.test(entry.name)))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

async function buildKey(goVersion: string): Promise<string> {
  const hash = createHash('sha256');
  hash.update(`${goVersion}\n${FLAGS.join(' ')}\n`);
  for (const file of await goSources(GO_DIR)) {
    hash.update(`${relative(GO_DIR, file)}\n`);
    hash.update(await readFile(file));
  }
  return hash.digest('hex').slice(0, 16);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function buildOne(language: string, target: string, env: NodeJS.ProcessEnv): Promise<void> {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  log(
    `building the ${language} engine (go build, GOOS=wasip1 GOARCH=wasm); a cold build takes a minute or two`,
  );
  const heartbeat = setInterval(
    () => log(`still building the ${language} engine (${seconds()}s)`),
    HEARTBEAT_MS,
  );
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    await run(['build', ...FLAGS, '-o', temporary, `./${language}`], env);
    await rename(temporary, target);
  } finally {
    clearInterval(heartbeat);
    await rm(temporary, { force: true });
  }
  const { size } = await stat(target);
  log(`built the ${language} engine in ${seconds()}s (${(size / 2 ** 20).toFixed(1)} MiB)`);
}

function parseArguments(args: readonly string[]): { language: Language; outDir: string } {
  const [language, outDir] = args;
  if (!LANGUAGES.includes(language as Language) || outDir === undefined || args.length !== 2) {
    throw new Error(`usage: build-engines.ts <${LANGUAGES.join('|')}> <output directory>`);
  }
  return { language: language as Language, outDir: resolve(outDir) };
}

async function main(): Promise<void> {
  const { language, outDir } = parseArguments(process.argv.slice(2));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GOOS: 'wasip1',
    GOARCH: 'wasm',
    CGO_ENABLED: '0',
    GOTOOLCHAIN: 'local',
  };
  const goVersion = (await run(['env', 'GOVERSION'], env)).trim();
  const key = await buildKey(goVersion);
  const cacheRoot = process.env.SIGNET_CACHE_DIR || join(homedir(), '.cache', 'signet');
  const cacheDir = join(cacheRoot, 'policy-engines', key);
  const manifestPath = join(outDir, 'manifest.json');
  const target = join(outDir, `${language}.wasm`);
  const current = await readFile(manifestPath, 'utf8').then(
    (text) => JSON.parse(text) as { key?: string },
    () => ({}) as { key?: string },
  );
  if (current.key === key && (await exists(target))) {
    log(`the ${language} engine is up to date (${key}, ${goVersion})`);
    return;
  }
  await mkdir(cacheDir, { recursive: true });
  await mkdir(outDir, { recursive: true });
  const cached = join(cacheDir, `${language}.wasm`);
  if (await exists(cached)) log(`the ${language} engine is cached at ${cached}`);
  else await buildOne(language, cached, env);
  const bytes = await readFile(cached);
  const files = {
    [language]: { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
  };
  await copyFile(cached, target);
  await writeFile(manifestPath, `${JSON.stringify({ key, goVersion, files }, null, 2)}\n`);
  log(`the ${language} engine is ready in ${relative(process.cwd(), outDir) || outDir} (${key})`);
}

main().catch((error: unknown) => {
  process.stderr.write(`policy-engines: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
