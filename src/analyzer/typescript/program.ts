import { dirname, isAbsolute, join, relative } from 'node:path';
import ts from 'typescript';

/** The module-resolution settings of the repository's own tsconfig.json that matter for imports. */
function repoResolutionOptions(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  if (!ts.sys.fileExists(configPath)) return {};
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error || !read.config) return {};
  // No file enumeration: the analyzer chooses the files (readDirectory answers nothing).
  const parsed = ts.parseJsonConfigFileContent(
    read.config,
    { ...ts.sys, readDirectory: () => [] },
    root,
    undefined,
    configPath,
  );
  const { paths, baseUrl, rootDirs, jsxImportSource } = parsed.options;
  const options: ts.CompilerOptions = { paths, baseUrl, rootDirs, jsxImportSource };
  // `paths` without `baseUrl` resolve against the config's folder (an internal option of tsc).
  if (paths && parsed.options.pathsBasePath) options.pathsBasePath = parsed.options.pathsBasePath;
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}

/**
 * The standard library's parsed files, shared by every analysis in this process (a source file is
 * immutable once parsed; the options that shape it are fixed below).
 */
const libFiles = new Map<string, ts.SourceFile>();

export interface AnalysisProgram {
  program: ts.Program;
  /** Resolves an import specifier of `containingFile` to a file name, if the program holds one. */
  resolveModule(specifier: string, containingFile: string): string | undefined;
}

/**
 * One TypeScript Program over the repository's TS/JS files (`files`: absolute paths), set up to
 * resolve imports the way bundlers and Node's ESM do (`./x.js` → `x.ts`, extensionless, index
 * files, the repository's `paths`), with the standard library for inference. Dependencies in
 * node_modules (and files outside `root`) are not loaded: their calls would be dropped anyway,
 * and loading their declarations would cost most of the time. `onParsed` is called once per repository file parsed.
 */
export function createAnalysisProgram(
  root: string,
  files: string[],
  onParsed: (count: number) => void,
): AnalysisProgram {
  const options: ts.CompilerOptions = {
    ...repoResolutionOptions(root),
    allowJs: true,
    checkJs: false,
    noEmit: true,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    jsx: ts.JsxEmit.Preserve,
    esModuleInterop: true,
    types: [],
    // The language's own types for inference (Promise, Array…); no DOM: no repo symbol lives there.
    lib: ['lib.es2022.d.ts'],
  };
  const host = ts.createCompilerHost(options, true);
  const libDir = dirname(ts.getDefaultLibFilePath(options));
  // The repository's own files and the standard library; nothing of node_modules or outside the root.
  const allowed = (path: string) => {
    if (path.startsWith(libDir)) return true;
    const inner = relative(root, path);
    return !inner.startsWith('..') && !isAbsolute(inner) && !/(^|[\\/])node_modules([\\/]|$)/.test(inner);
  };
  const { fileExists, directoryExists, readFile, getSourceFile } = host;
  host.fileExists = (path) => allowed(path) && fileExists.call(host, path);
  host.directoryExists = (path) => allowed(path) && (directoryExists?.call(host, path) ?? true);
  host.readFile = (path) => (allowed(path) ? readFile.call(host, path) : undefined);

  const wanted = new Set(files);
  let parsed = 0;
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const isLib = fileName.startsWith(libDir);
    const cached = isLib ? libFiles.get(fileName) : undefined;
    if (cached) return cached;
    const sourceFile = getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate);
    if (isLib && sourceFile) libFiles.set(fileName, sourceFile);
    if (wanted.has(fileName)) onParsed(++parsed);
    return sourceFile;
  };

  const program = ts.createProgram({ rootNames: files, options, host });
  const cache = ts.createModuleResolutionCache(root, (f) => host.getCanonicalFileName(f), options);
  return {
    program,
    resolveModule(specifier, containingFile) {
      const resolved = ts.resolveModuleName(specifier, containingFile, options, host, cache).resolvedModule;
      return resolved && wanted.has(resolved.resolvedFileName) ? resolved.resolvedFileName : undefined;
    },
  };
}
