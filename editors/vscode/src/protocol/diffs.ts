// Diffs: the unified diff of an approval preview, parsed and applied to the
// current text so the editor can show a side-by-side view of the proposed
// change, with the unified text itself as the fallback.

import * as path from 'node:path';

export interface HunkLine {
  op: ' ' | '-' | '+';
  /** text includes the line terminator, if the line had one. */
  text: string;
}

export interface Hunk {
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  lines: HunkLine[];
}

export interface FilePatch {
  /** oldPath and newPath are the paths after a/ and b/; null for /dev/null. */
  oldPath: string | null;
  newPath: string | null;
  hunks: Hunk[];
}

const hunkHeader = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function headerPath(s: string): string | null {
  let p = s.split('\t')[0];
  if (p === '/dev/null') return null;
  if (p.startsWith('a/') || p.startsWith('b/')) p = p.slice(2);
  return p;
}

/**
 * parseUnifiedDiff reads a unified diff of one or more files, as the daemon
 * writes approval previews ("--- a/p", "+++ b/p", "@@" hunks, "\ No newline
 * at end of file"). Hunk bodies are read by their counts, so a removed line
 * that itself starts with "--" is not taken for a header.
 */
export function parseUnifiedDiff(text: string): FilePatch[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const files: FilePatch[] = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i];
    if (l.startsWith('--- ') && i + 1 < lines.length && lines[i + 1].startsWith('+++ ')) {
      files.push({ oldPath: headerPath(l.slice(4)), newPath: headerPath(lines[i + 1].slice(4)), hunks: [] });
      i += 2;
      continue;
    }
    const m = hunkHeader.exec(l);
    if (m && files.length > 0) {
      const h: Hunk = {
        oldStart: Number(m[1]),
        oldCount: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newCount: m[4] === undefined ? 1 : Number(m[4]),
        lines: [],
      };
      i++;
      let oldLeft = h.oldCount;
      let newLeft = h.newCount;
      while (i < lines.length && (oldLeft > 0 || newLeft > 0 || lines[i].startsWith('\\'))) {
        const body = lines[i];
        if (body.startsWith('\\')) {
          // The previous line had no terminator.
          const prev = h.lines[h.lines.length - 1];
          if (prev) prev.text = prev.text.slice(0, -1);
          i++;
          continue;
        }
        const op = (body[0] ?? ' ') as HunkLine['op'];
        if (op !== ' ' && op !== '-' && op !== '+') break;
        h.lines.push({ op, text: body.slice(1) + '\n' });
        if (op !== '+') oldLeft--;
        if (op !== '-') newLeft--;
        i++;
      }
      files[files.length - 1].hunks.push(h);
      continue;
    }
    i++;
  }
  return files;
}

/** splitLines splits text into lines that keep their terminators. */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    if (nl < 0) break;
    out.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

function matchesAt(lines: string[], at: number, want: string[]): boolean {
  if (at < 0 || at + want.length > lines.length) return false;
  return want.every((w, k) => lines[at + k] === w);
}

/**
 * applyPatch applies a file's hunks to text. A hunk is looked for at its
 * line number first, then anywhere after the previous hunk (the buffer may
 * have moved a little since the preview was made). It returns undefined
 * when a hunk's old lines are not found.
 */
export function applyPatch(text: string, patch: FilePatch): string | undefined {
  const lines = splitLines(text);
  const out: string[] = [];
  let pos = 0;
  for (const h of patch.hunks) {
    const oldLines = h.lines.filter((l) => l.op !== '+').map((l) => l.text);
    const newLines = h.lines.filter((l) => l.op !== '-').map((l) => l.text);
    let at = h.oldCount === 0 ? h.oldStart : h.oldStart - 1;
    if (at < pos || !matchesAt(lines, at, oldLines)) {
      at = -1;
      for (let k = pos; k + oldLines.length <= lines.length; k++) {
        if (matchesAt(lines, k, oldLines)) {
          at = k;
          break;
        }
      }
      if (at < 0) return undefined;
    }
    out.push(...lines.slice(pos, at), ...newLines);
    pos = at + oldLines.length;
  }
  out.push(...lines.slice(pos));
  return out.join('');
}

/** ProposedFile is one file of an approval preview with its text before and after. */
export interface ProposedFile {
  /** path is the absolute path of the file as it is now (or will be, when created). */
  path: string;
  /** displayPath is the path as the preview names it. */
  displayPath: string;
  original: string;
  /** proposed is null when the file would be deleted. */
  proposed: string | null;
  /** movedTo is the new absolute path when the file would be moved. */
  movedTo?: string;
  /** applied says the change already landed: original is the text before it, the file itself is after. */
  applied?: boolean;
}

/** resolveDisplayPath turns a path as the daemon shows it (relative to the first folder) into an absolute one. */
export function resolveDisplayPath(display: string, root: string | undefined): string {
  if (path.isAbsolute(display) || !root) return display;
  return path.join(root, display);
}

/**
 * proposedFiles applies an approval preview to the files' current text,
 * which read returns (the open buffer's text when there is one, since that
 * is what the daemon diffed against; undefined for a missing file). It
 * returns undefined when any file's hunks do not apply.
 */
export async function proposedFiles(
  preview: string,
  root: string | undefined,
  read: (absPath: string) => Promise<string | undefined>,
): Promise<ProposedFile[] | undefined> {
  const out: ProposedFile[] = [];
  for (const fp of parseUnifiedDiff(preview)) {
    const display = fp.oldPath ?? fp.newPath;
    if (display === null) continue;
    const abs = resolveDisplayPath(display, root);
    const original = fp.oldPath === null ? '' : await read(abs);
    if (original === undefined) return undefined;
    const proposed = applyPatch(original, fp);
    if (proposed === undefined) return undefined;
    const f: ProposedFile = { path: abs, displayPath: display, original, proposed: fp.newPath === null ? null : proposed };
    if (fp.oldPath !== null && fp.newPath !== null && fp.newPath !== fp.oldPath) {
      f.movedTo = resolveDisplayPath(fp.newPath, root);
    }
    out.push(f);
  }
  return out;
}

/**
 * applyPatchLoosely applies what it can of a file's hunks to text that
 * changed since the preview was made (the user typed in the file): a hunk
 * whose context no longer matches is placed by its removed lines alone,
 * and an insertion by the line before it; a hunk found neither way is
 * skipped and counted.
 */
export function applyPatchLoosely(text: string, patch: FilePatch): { text: string; skipped: number } {
  let cur = text;
  let skipped = 0;
  for (const h of patch.hunks) {
    const exact = applyPatch(cur, { ...patch, hunks: [h] });
    if (exact !== undefined) {
      cur = exact;
      continue;
    }
    const lines = splitLines(cur);
    const removed = h.lines.filter((l) => l.op === '-').map((l) => l.text);
    const added = h.lines.filter((l) => l.op === '+').map((l) => l.text);
    let at = -1;
    let len = removed.length;
    if (removed.length > 0) {
      for (let k = 0; k + removed.length <= lines.length && at < 0; k++) if (matchesAt(lines, k, removed)) at = k;
    } else {
      const i = h.lines.findIndex((l) => l.op === '+');
      const before = i > 0 ? h.lines[i - 1] : undefined;
      if (!before) at = h.oldStart === 0 ? 0 : -1;
      else for (let k = 0; k < lines.length && at < 0; k++) if (lines[k] === before.text) at = k + 1;
      len = 0;
    }
    if (at < 0) {
      skipped++;
      continue;
    }
    cur = [...lines.slice(0, at), ...added, ...lines.slice(at + len)].join('');
  }
  return { text: cur, skipped };
}

/** DiffUI shows diffs in the editor. */
export interface DiffUI {
  /** openDiff shows file's current text against its proposed text. */
  openDiff(file: ProposedFile, title: string): PromiseLike<void>;
}

/**
 * showProposedChange opens VS Code's diff editor per file of the preview:
 * the file as it is now against the proposed text. When the file changed
 * since the preview was made, the proposal is placed loosely in the text
 * as it is now, and the title says how much of it could not be.
 */
export async function showProposedChange(
  preview: string,
  title: string,
  root: string | undefined,
  read: (absPath: string) => Promise<string | undefined>,
  ui: DiffUI,
): Promise<void> {
  const files = await proposedFiles(preview, root, read);
  if (files && files.length > 0) {
    for (const f of files) {
      await ui.openDiff(f, `${f.displayPath}${f.movedTo ? ' → ' + path.basename(f.movedTo) : ''}: ${title}`);
    }
    return;
  }
  for (const fp of parseUnifiedDiff(preview)) {
    const display = fp.oldPath ?? fp.newPath;
    if (display === null) continue;
    const abs = resolveDisplayPath(display, root);
    const original = fp.oldPath === null ? '' : ((await read(abs)) ?? '');
    const loose = applyPatchLoosely(original, fp);
    const note = loose.skipped ? ` (${loose.skipped} of ${fp.hunks.length} changes no longer fit the file as it is now)` : ' (the file changed since)';
    await ui.openDiff({ path: abs, displayPath: display, original, proposed: fp.newPath === null ? null : loose.text }, `${display}: ${title}${note}`);
  }
}

/**
 * compactHunks reads a compact diff (cline/diff's: "-3: old", "+3: new"
 * lines, in a ```diff fence after an "Edited" line) into hunks, or
 * undefined when it was truncated and cannot be taken back.
 */
export function compactHunks(diff: string): Hunk[] | undefined {
  const hunks: Hunk[] = [];
  let cur: Hunk | undefined;
  for (const l of diff.split('\n')) {
    if (/^\.\.\. diff truncated/.test(l) || /characters? (left out|cut)/.test(l)) return undefined;
    const m = /^([-+])(\d+): ?(.*)$/.exec(l);
    if (!m) {
      cur = undefined;
      continue;
    }
    const op = m[1] as '-' | '+';
    if (!cur || (op === '-' && cur.lines.some((x) => x.op === '+'))) {
      cur = { oldStart: op === '-' ? Number(m[2]) : 0, oldCount: 0, newStart: op === '+' ? Number(m[2]) : 0, newCount: 0, lines: [] };
      hunks.push(cur);
    }
    if (op === '+' && cur.newStart === 0) cur.newStart = Number(m[2]);
    cur.lines.push({ op, text: m[3] + '\n' });
    if (op === '-') cur.oldCount++;
    else cur.newCount++;
  }
  return hunks;
}

/**
 * showAppliedChange opens the diff editor of an edit that landed: the
 * file before the edit (the edit taken back from the text as it is now)
 * against the file itself.
 */
export async function showAppliedChange(
  file: string,
  diff: string,
  title: string,
  read: (absPath: string) => Promise<string | undefined>,
  ui: DiffUI,
): Promise<void> {
  const now = (await read(file)) ?? '';
  const hunks = compactHunks(diff);
  let before: string | undefined;
  if (hunks) {
    // Taken back: each hunk's added lines become its removed ones again.
    const back: FilePatch = {
      oldPath: file,
      newPath: file,
      hunks: hunks.map((h) => ({ oldStart: h.newStart, oldCount: h.newCount, newStart: h.oldStart, newCount: h.oldCount, lines: h.lines.map((l) => ({ op: l.op === '+' ? '-' : '+', text: l.text })) })),
    };
    const r = applyPatchLoosely(now, back);
    if (r.skipped === 0) before = r.text;
  }
  const name = path.basename(file);
  await ui.openDiff({ path: file, displayPath: name, original: before ?? now, proposed: now, applied: true }, `${name}: ${title}${before === undefined ? ' (the edit can no longer be taken apart from later changes)' : ''}`);
}
