/**
 * The private environment as the rest of the extension sees it: this package's manifest, the environment's
 * interpreter when it is complete (a discovery candidate, interpreter.ts), and whether an interpreter the server
 * starts on needs the environment (then "NKI: Create Server Environment" is offered, once a session). File
 * access is injected for tests.
 */
import * as path from 'node:path';
import type { Found } from './interpreter';
import {
  type EnvPaths,
  type Manifest,
  envPaths,
  nativeFit,
  parseManifest,
  parseRecord,
  recordFits,
} from './privateEnv';

export interface ReadFiles {
  /** The file's text, undefined when it cannot be read. */
  read(file: string): string | undefined;
  exists(file: string): boolean;
}

export class ServerEnvironment {
  readonly paths: EnvPaths;
  private offered = false;

  constructor(
    private readonly extensionPath: string,
    globalStorage: string,
    private readonly files: ReadFiles,
    platform: NodeJS.Platform = process.platform,
  ) {
    this.paths = envPaths(globalStorage, platform);
  }

  /** bundled/manifest.json, undefined when running from the repository (or for a manifest without pins). */
  manifest(): Manifest | undefined {
    const text = this.files.read(path.join(this.extensionPath, 'bundled', 'manifest.json'));
    return text === undefined ? undefined : parseManifest(text);
  }

  /**
   * The environment's interpreter when the environment is complete for this package's pins; with `setting` (the
   * interpreter setting's value), only when it was made from that interpreter.
   */
  python(setting?: string): string | undefined {
    const manifest = this.manifest();
    const text = this.files.read(this.paths.record);
    const record = text === undefined ? undefined : parseRecord(text);
    if (!manifest || !record || !recordFits(manifest, record)) return undefined;
    if (setting !== undefined && record.base !== setting) return undefined;
    return this.files.exists(this.paths.python) ? this.paths.python : undefined;
  }

  /**
   * Why the server started on `found` lacks its compiled packages, the first time this session it does; else
   * undefined (they are bundled for its version, it is the private environment, or the offer was made).
   */
  offerFor(found: Found): string | undefined {
    if (this.offered || found.source === 'private-env') return undefined;
    const manifest = this.manifest();
    if (!manifest) return undefined;
    const record = this.files.read(this.paths.record);
    const fit = nativeFit(manifest, found.version, record === undefined ? undefined : parseRecord(record));
    if (fit.kind !== 'needs-env') return undefined;
    this.offered = true;
    return fit.reason;
  }
}
