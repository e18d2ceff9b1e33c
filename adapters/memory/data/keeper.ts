/**
 * Keeps a memory backend's data over its life: loads them from their source, holds them in a
 * {@link MemoryStore}, puts them back as they were at start (reset) or as the source says now
 * (reload), and writes every change back to the data file when `writeBack` is set.
 */
import type { DelayedChanges } from '../completion/changes';
import { DataFileWriter, readDataFile } from './file';
import { defaultSeed, generateSeed } from './seed';
import type { MemoryData } from './shape';
import { MemoryStore } from './store';

/** Where the data come from. */
export type MemorySource =
  /** A JSON data file; `writeBack` writes every change to it. */
  | { file: string; writeBack?: boolean }
  /** Generated volumes (`generateSeed`). */
  | {
      generate: {
        volumes: number;
        attachmentsPerVolume: number;
        namespaces?: readonly string[];
        snapshotsPerVolume?: number;
      };
    }
  /** Given data (copied). */
  | { data: MemoryData }
  /** The default set (`defaultSeed`). */
  | { default: true };

function load(source: MemorySource): MemoryData {
  if ('file' in source) return readDataFile(source.file, 'dataFile');
  if ('generate' in source) return generateSeed(source.generate);
  if ('data' in source) return structuredClone(source.data);
  return defaultSeed();
}

export class DataKeeper {
  readonly store: MemoryStore;
  readonly #source: MemorySource;
  readonly #initial: MemoryData;
  readonly #changes: DelayedChanges;
  readonly #writer: DataFileWriter | null;

  /** @throws ConfigError when the data file cannot be read or is bad */
  constructor(backend: string, source: MemorySource, changes: DelayedChanges, onWriteError?: (err: unknown) => void) {
    this.#source = source;
    this.#initial = load(source);
    this.#changes = changes;
    this.store = new MemoryStore(backend, this.#initial);
    this.#writer =
      'file' in source && source.writeBack
        ? new DataFileWriter(source.file, () => this.store.toData(), onWriteError)
        : null;
    if (this.#writer) this.store.onWrite(() => this.#writer!.changed());
  }

  /**
   * Back to the data as they were at start. Running changes end FAILED; watchers hear of every
   * volume that differs; the file is written when `writeBack` is set.
   */
  reset(): void {
    this.#replace(structuredClone(this.#initial), 'the data were reset');
  }

  /** Reads the source again (the data file as it is now). @throws ConfigError when the file is bad (the data stay) */
  reload(): void {
    this.#replace(load(this.#source), 'the data were reloaded');
  }

  /** Resolves when every change so far is written back (at once without `writeBack`). */
  flush(): Promise<void> {
    return this.#writer?.flush() ?? Promise.resolve();
  }

  /** Ends running changes (FAILED) and writes the last data back. */
  async close(): Promise<void> {
    this.#changes.abandon('the backend was closed');
    await this.flush();
  }

  #replace(data: MemoryData, why: string): void {
    this.#changes.abandon(why);
    this.store.replace(data);
    this.#writer?.changed();
  }
}
