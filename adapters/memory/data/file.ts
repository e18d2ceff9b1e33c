/**
 * The data file: read at start and on reload, and, when `writeBack` is set, written after every
 * change (coalesced per turn of the event loop, through a temporary file and a rename so a reader
 * never sees half a file). Without `writeBack` the data are volatile: changes live until restart.
 */
import { readFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { checkData, type MemoryData } from './shape';
import { ConfigError } from '../../contract/settings';

/** Reads and checks a data file. @throws ConfigError naming the file */
export function readDataFile(path: string, setting: string): MemoryData {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      setting,
      `cannot read the data file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(setting, `the data file ${path} is not JSON: ${(err as Error).message}`);
  }
  return checkData(raw, path);
}

/** Writes the data back to the file, at most one write at a time and the last data always. */
export class DataFileWriter {
  #dirty = false;
  #running: Promise<void> | null = null;

  constructor(
    readonly path: string,
    readonly data: () => MemoryData,
    /** Told of a failed write (logged by whoever built the backend). @default ignore */
    readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Marks the data changed; a write follows. */
  changed(): void {
    this.#dirty = true;
    this.#running ??= this.#loop();
  }

  /** Resolves once every change so far is on disk. */
  async flush(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #loop(): Promise<void> {
    // Let the rest of this turn's changes join the write.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.#dirty) {
        this.#dirty = false;
        const tmp = `${this.path}.${process.pid}.tmp`;
        try {
          await writeFile(tmp, `${JSON.stringify(this.data(), null, 2)}\n`, 'utf8');
          await rename(tmp, this.path);
        } catch (err) {
          this.onError(err);
        }
      }
    } finally {
      this.#running = null;
    }
  }
}
