// Checks on the project's shape: the protocol glue never imports vscode,
// and package.json contributes exactly the commands and settings the code
// uses.

import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';

const root = path.resolve(__dirname, '..', '..');
const src = (...p: string[]) => path.join(root, 'src', ...p);

test('src/protocol does not import vscode', () => {
  const files = fs.readdirSync(src('protocol')).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 5);
  for (const f of files) {
    const text = fs.readFileSync(src('protocol', f), 'utf8');
    assert.ok(!/from\s+['"]vscode(-languageclient[^'"]*)?['"]|require\(\s*['"]vscode/.test(text), `${f} imports vscode`);
  }
});

test('package.json contributes the commands extension.ts registers and the settings readSettings reads', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const ext = fs.readFileSync(src('extension.ts'), 'utf8');
  const registered = [...ext.matchAll(/cmd\('([\w.]+)'/g)].map((m) => m[1]).sort();
  const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, registered);
  for (const title of ['New Task (Act)', 'New Task (Plan)', 'Switch Mode', 'Cancel']) {
    assert.ok(pkg.contributes.commands.some((c: { title: string; category: string }) => c.category === 'Cline' && c.title === title), `no "Cline: ${title}"`);
  }
  // The daemon's own commands are registered by vscode-languageclient; ours must not clash.
  for (const c of ['cline.newSession', 'cline.prompt', 'cline.setMode', 'cline.cancel']) assert.ok(!contributed.includes(c), c);

  const settings = Object.keys(pkg.contributes.configuration.properties).sort();
  const read = fs.readFileSync(src('protocol', 'settings.ts'), 'utf8');
  const keys = [...read.matchAll(/(?:str\(|get\()'(\w+)'\)/g)].map((m) => `cline.${m[1]}`).sort();
  assert.deepEqual(settings, keys);
  for (const k of ['cline.path', 'cline.provider', 'cline.model', 'cline.baseUrl', 'cline.apiKeyEnv', 'cline.mode']) assert.ok(settings.includes(k), k);
});
