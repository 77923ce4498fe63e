// The VS Code targets, declared once in targets.json (scripts/native_pins.py reads the same file): per target
// the wheel platform tags pip downloads for, the bundled CPython versions and the PEP 508 environment the
// pins in extension/native-pins.txt are evaluated in.
import * as fs from 'node:fs';

const table = JSON.parse(fs.readFileSync(new URL('./targets.json', import.meta.url), 'utf8'));

export const TARGETS = table.targets;

/** The platform-neutral package: pure-Python libraries only, every compiled package installed on demand. */
export const NEUTRAL = table.neutral;

/** Every CPython version the server supports (requires-python >= 3.10; 3.13 the newest tested). */
export const SUPPORTED_PYTHONS = table.supportedPythons;
