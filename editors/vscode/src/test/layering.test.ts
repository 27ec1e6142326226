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

test('npm run bundle makes one file that loads with only vscode outside it', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.main, './dist/extension.js');
  const script: string = pkg.scripts.bundle;
  const flags = script.split(/\s+/).slice(1);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild: typeof import('esbuild') = require('esbuild');
  const entry = flags.find((f) => f.endsWith('.ts'))!;
  const out = esbuild.buildSync({
    entryPoints: [path.join(root, entry)],
    bundle: flags.includes('--bundle'),
    external: flags.filter((f) => f.startsWith('--external:')).map((f) => f.slice('--external:'.length)),
    format: 'cjs',
    platform: 'node',
    write: false,
    outfile: path.join(root, 'dist', 'extension.js'),
  });
  assert.equal(out.outputFiles.length, 1);
  const code = out.outputFiles[0].text;
  // Load it with a stand-in vscode whose every name is a class: any other
  // require left in the bundle would fail here.
  const required: string[] = [];
  const stub = new Proxy({}, { get: () => class {} });
  const mod = { exports: {} as Record<string, unknown> };
  const req = (name: string) => {
    required.push(name);
    if (name === 'vscode') return stub;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (name.startsWith('node:') || require('node:module').builtinModules.includes(name)) return require(name);
    throw new Error(`the bundle requires ${name}`);
  };
  new Function('module', 'exports', 'require', '__filename', '__dirname', code)(mod, mod.exports, req, 'extension.js', root);
  assert.equal(typeof mod.exports.activate, 'function');
  assert.equal(typeof mod.exports.deactivate, 'function');
  assert.ok(required.includes('vscode'));
  // Restricted Mode is declared, not left to VS Code's guess.
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, false);
  assert.ok(pkg.capabilities.untrustedWorkspaces.description);
});

test('the VSIX holds the bundle, the chat page, the manifest, README, LICENSE and the icons only', () => {
  const ignore = fs.readFileSync(path.join(root, '.vscodeignore'), 'utf8');
  const kept = ignore.split('\n').filter((l) => l.startsWith('!')).map((l) => l.slice(1)).sort();
  assert.deepEqual(kept, ['LICENSE', 'README.md', 'dist/codicon.css', 'dist/codicon.ttf', 'dist/extension.js', 'icon.png', 'media/chat.css', 'media/chat.js', 'media/cline.svg', 'package.json']);
  // The chat page loads what the bundle step copies and the files kept.
  const page = fs.readFileSync(src('chatView.ts'), 'utf8');
  for (const f of ["'dist', 'codicon.css'", "'media', 'chat.css'", "'media', 'chat.js'"]) assert.ok(page.includes(f), f);
  const pkgJson = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.match(pkgJson.scripts.bundle, /codicon\.css .*codicon\.ttf dist\//);
  assert.equal(pkgJson.contributes.viewsContainers.activitybar[0].icon, 'media/cline.svg');
  for (const f of ['LICENSE', 'README.md', 'icon.png', 'media/chat.js', 'media/chat.css', 'media/cline.svg']) assert.ok(fs.existsSync(path.join(root, f)), f);
  const png = fs.readFileSync(path.join(root, 'icon.png'));
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.ok(png.readUInt32BE(16) >= 128 && png.readUInt32BE(20) >= 128, 'the marketplace wants an icon of 128×128 or more');
});
