// The chat view's page. It renders what the extension posts (items of the
// session, its state) and posts back the user's actions. Agent text comes
// as HTML the extension rendered from markdown with every character of
// the model's text escaped; everything else is set as text here. No
// control of an approval is ever focused by this page, so keys typed in
// the editor or in the prompt box never answer one: only a click, or a
// key on a button the user moved to, does.
// @ts-check
(function () {
  // eslint-disable-next-line no-undef
  const vscode = acquireVsCodeApi();
  const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const log = $('log');
  const input = /** @type {HTMLTextAreaElement} */ ($('input'));
  const modeSel = /** @type {HTMLSelectElement} */ ($('mode'));
  const chips = $('chips');
  const sessionsBox = $('sessions');
  const defaultModes = ['plan', 'act', 'search', 'minimal', 'yolo'];
  /** @type {Array<{kind: string, path: string, label?: string}>} */
  let mentions = [];
  let state = { mode: 'act', modes: [], model: '', running: false, usage: { inputTokens: 0, outputTokens: 0 }, pending: 0 };
  /** open remembers which cards the user opened or closed. */
  const open = new Map();
  /** feedback keeps what was typed in a rejection box across re-renders. */
  const feedback = new Map();

  const post = (m) => vscode.postMessage(m);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function icon(name) {
    const i = el('i', `codicon codicon-${name}`);
    // The glyph is decoration: it is not part of a button's name.
    i.setAttribute('aria-hidden', 'true');
    return i;
  }
  function button(label, cls, iconName, onClick) {
    const b = el('button', cls);
    if (iconName) b.append(icon(iconName), ' ');
    b.append(label);
    b.addEventListener('click', onClick);
    return b;
  }

  /**
   * diffBlock shows a unified or compact diff with its added and removed
   * lines coloured. The file headers (---/+++, diff, index) and the "No
   * newline at end of file" markers are left out, since the card names the
   * file, and a hunk header becomes a thin separator between hunks: what
   * is left is the change itself.
   */
  function diffBlock(text) {
    const pre = el('pre', 'diff');
    let first = true;
    for (const line of text.split('\n')) {
      if (line.startsWith('```') || line.startsWith('--- ') || line.startsWith('+++ ') || line.startsWith('diff ') || line.startsWith('index ') || line.startsWith('\\ ')) continue;
      if (line.startsWith('@@')) {
        if (!first) pre.append(el('span', 'hunk', '⋯'), '\n');
        continue;
      }
      if (line === '' && first) continue;
      first = false;
      const cls = line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : '';
      pre.append(el('span', cls, line), '\n');
    }
    return pre;
  }

  const kindIcon = { read: 'file', edit: 'edit', delete: 'trash', move: 'arrow-swap', search: 'search', execute: 'terminal', think: 'lightbulb', fetch: 'globe', switch_mode: 'arrow-swap', other: 'tools' };
  const statusIcon = { pending: 'circle-large-outline', in_progress: 'loading codicon-modifier-spin', completed: 'pass', failed: 'error', rejected: 'circle-slash', cancelled: 'circle-slash' };

  function renderTool(item) {
    const waiting = item.approval && !item.approval.answered;
    const card = el('details', `card status-${item.status}${waiting ? ' waiting' : ''}`);
    // A waiting card is open; others keep what the user made of them.
    card.open = waiting || (open.get(item.id) ?? false);
    const sum = el('summary');
    sum.addEventListener('click', () => open.set(item.id, !card.open));
    sum.append(icon(kindIcon[item.toolKind] || 'tools'), el('span', 'title', item.title));
    if (item.applied) sum.append(el('span', 'counts', `+${item.applied.added} −${item.applied.removed}`));
    const st = el('span', 'badge', waiting ? 'waiting for you' : item.status.replace('_', ' '));
    st.prepend(icon(waiting ? 'question' : statusIcon[item.status] || 'circle-large-outline'), ' ');
    sum.append(st);
    card.append(sum);
    const body = el('div', 'body');
    const a = item.approval;
    if (a) {
      const box = el('div', `approval${a.answered ? ' answered' : ''}`);
      box.dataset.approvalId = a.approvalId;
      if (a.command) box.append(el('pre', 'command', `$ ${a.command}`));
      if (a.diff) box.append(diffBlock(a.diff));
      const row = el('div', 'row');
      if (a.diff) row.append(button('Open diff', 'secondary open-diff', 'diff', () => post({ type: 'openDiff', toolCallId: item.toolCallId })));
      if (a.answered) {
        row.append(el('span', 'answer', `Answered: ${a.answered}`));
        box.append(row);
      } else {
        const why = /** @type {HTMLInputElement} */ (el('input', 'feedback'));
        why.placeholder = 'Why reject? (optional, sent to the model)';
        why.setAttribute('aria-label', 'Reason for rejecting');
        why.value = feedback.get(a.approvalId) || '';
        why.addEventListener('input', () => feedback.set(a.approvalId, why.value));
        for (const b of a.buttons) {
          const cls = b.kind === 'allow_once' ? 'allow' : b.kind.startsWith('reject') ? 'secondary reject' : 'secondary always';
          const ic = b.kind === 'allow_once' ? 'check' : b.kind.startsWith('reject') ? 'close' : 'check-all';
          row.append(
            button(b.label, cls, ic, () => {
              const text = b.kind.startsWith('reject') ? why.value.trim() : '';
              post({ type: 'answer', approvalId: a.approvalId, optionId: b.optionId, feedback: text || undefined });
            }),
          );
        }
        box.append(row, why);
      }
      body.append(box);
    } else if (item.toolKind === 'edit' && item.applied) {
      const row = el('div', 'row');
      row.append(button('Open diff', 'secondary open-diff', 'diff', () => post({ type: 'openDiff', toolCallId: item.toolCallId })));
      body.append(row);
    }
    if (item.notes) body.append(el('pre', 'output notes', item.notes));
    if (item.applied) body.append(diffBlock(item.applied.diff));
    if (item.output && !item.applied) body.append(el('pre', 'output', item.output.length > 4000 ? item.output.slice(0, 4000) + '\n…' : item.output));
    card.append(body);
    return card;
  }

  function render(item) {
    let node;
    switch (item.kind) {
      case 'user': {
        node = el('div', 'msg user');
        node.append(el('div', 'text', item.text));
        if (item.mentions.length) {
          const m = el('div', 'mentions');
          for (const label of item.mentions) m.append(el('span', 'chip', label));
          node.append(m);
        }
        break;
      }
      case 'agent':
        node = el('div', 'msg agent markdown');
        node.innerHTML = item.html;
        break;
      case 'thought': {
        node = el('details', 'thought');
        node.append(el('summary', '', 'Thinking'));
        const body = el('div', 'markdown');
        body.innerHTML = item.html;
        node.append(body);
        break;
      }
      case 'tool':
        node = renderTool(item);
        break;
      case 'plan': {
        node = el('div', 'plan');
        node.append(el('div', 'plan-title', 'Plan'));
        node.dataset.turn = String(item.turn);
        for (const e of item.entries) {
          const row = el('div', `plan-entry ${e.status || 'pending'}`);
          row.append(icon(e.status === 'completed' ? 'pass-filled' : e.status === 'in_progress' ? 'circle-large-filled' : 'circle-large-outline'), ' ', e.content);
          node.append(row);
        }
        break;
      }
      case 'note': {
        node = el('div', `note ${item.level}`);
        const line = el('div', 'note-text');
        line.append(icon(item.level === 'error' ? 'error' : 'info'), ' ', item.text);
        node.append(line);
        if (item.actions && item.actions.length) {
          const row = el('div', 'row');
          for (const a of item.actions) row.append(button(a.label, 'secondary note-action', '', () => post({ type: 'action', itemId: item.id, actionId: a.id })));
          node.append(row);
        }
        break;
      }
      case 'question': {
        node = el('div', `question${item.answered !== undefined ? ' answered' : ''}`);
        node.append(el('div', 'question-title', 'Cline asks'), el('div', 'question-text', item.question));
        if (item.answered !== undefined) {
          node.append(el('div', 'answer', `Answered: ${item.answered}`));
          break;
        }
        const row = el('div', 'row');
        for (const o of item.options) row.append(button(o, 'secondary option', '', () => post({ type: 'answerQuestion', itemId: item.id, answer: o })));
        const other = /** @type {HTMLInputElement} */ (el('input', 'feedback other'));
        other.placeholder = item.options.length ? 'Another answer (Enter to send)' : 'Your answer (Enter to send)';
        other.setAttribute('aria-label', 'Your answer');
        other.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' && other.value.trim()) post({ type: 'answerQuestion', itemId: item.id, answer: other.value.trim() });
        });
        const skip = button('Dismiss', 'secondary', '', () => post({ type: 'answerQuestion', itemId: item.id, answer: null }));
        node.append(row, other, skip);
        break;
      }
      default:
        return;
    }
    node.id = `item-${item.id}`;
    node.dataset.kind = item.kind;
    if (item.undone) node.classList.add('undone');
    const have = document.getElementById(node.id);
    const stick = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
    if (have) have.replaceWith(node);
    else log.append(node);
    $('empty').hidden = true;
    if (stick) log.scrollTop = log.scrollHeight;
    if (item.kind === 'plan' || item.kind === 'agent') renderState(state);
  }

  /** renderSetup is the first-run panel: what to pick, where the key comes from, and a way to try it offline. */
  function renderSetup(s) {
    const box = $('setup');
    const su = s.setup;
    box.hidden = !su || !!s.sessionId;
    if (box.hidden) return;
    box.replaceChildren(el('div', 'setup-title', 'Set up a model'));
    box.append(el('p', '', 'Cline needs a model provider. Pick one, then a model; the API key is read from an environment variable, never stored in settings.'));
    const prov = /** @type {HTMLSelectElement} */ (el('select'));
    prov.id = 'setup-provider';
    prov.setAttribute('aria-label', 'Provider');
    prov.append(Object.assign(el('option', '', 'Choose a provider…'), { value: '' }), ...su.providers.map((p) => Object.assign(el('option', '', p), { value: p })));
    prov.value = su.provider;
    prov.addEventListener('change', () => post({ type: 'setupProvider', provider: prov.value }));
    const r1 = el('label', 'row', 'Provider ');
    r1.append(prov);
    box.append(r1);
    if (su.provider) {
      const model = /** @type {HTMLSelectElement} */ (el('select'));
      model.id = 'setup-model';
      model.setAttribute('aria-label', 'Model');
      model.append(Object.assign(el('option', '', su.models.length ? 'Choose a model…' : 'no models listed: type one in Settings'), { value: '' }), ...su.models.map((m) => Object.assign(el('option', '', m), { value: m })));
      model.value = su.model;
      model.addEventListener('change', () => model.value && post({ type: 'setupModel', model: model.value }));
      const r2 = el('label', 'row', 'Model ');
      r2.append(model);
      box.append(r2);
      box.append(el('p', `key ${su.keySet ? 'set' : 'unset'}`, su.keyEnv ? (su.keySet ? `The key is read from ${su.keyEnv}, which is set.` : `The key is read from ${su.keyEnv}, which is not set: set it in the environment VS Code starts from, or name another variable in the setting cline.apiKeyEnv.`) : 'This provider needs no key, or name its variable in the setting cline.apiKeyEnv.'));
    }
    const row = el('div', 'row');
    row.append(button('Open Settings', 'secondary', 'settings-gear', () => post({ type: 'openSettings' })), button('Try it offline', 'secondary', 'play', () => post({ type: 'tryDemo' })));
    box.append(row, el('p', 'hint', 'Try it offline: a sample project and a recorded session (the replay provider), in a new window, no key needed.'));
  }

  function renderState(s) {
    state = s;
    renderSetup(s);
    const modes = s.modes && s.modes.length ? s.modes.map((m) => m.id) : defaultModes;
    if (modeSel.options.length !== modes.length || [...modeSel.options].some((o, i) => o.value !== modes[i])) {
      modeSel.replaceChildren(...modes.map((m) => Object.assign(el('option', '', m), { value: m })));
    }
    modeSel.value = s.mode;
    $('model-name').textContent = s.model || 'default model';
    $('meter').textContent = s.meter || '';
    $('cancel').hidden = !s.running;
    /** @type {HTMLButtonElement} */ ($('send')).disabled = s.running;
    /** @type {HTMLButtonElement} */ ($('undo')).disabled = s.running || !s.sessionId;
    /** @type {HTMLButtonElement} */ ($('checkpoints')).disabled = s.running || !s.sessionId;
    $('status').textContent = s.pending ? `${s.pending} approval${s.pending > 1 ? 's' : ''} waiting` : s.running ? 'Working…' : '';
    document.body.dataset.running = String(s.running);
    // After a plan (the agent's answer in plan mode), the way on is one click: act on it.
    $('switch-act').hidden = !(s.sessionId && !s.running && s.mode === 'plan' && log.querySelector('.msg.agent:not(.undone), .plan:not(.undone)'));
  }

  function renderChips() {
    chips.replaceChildren(
      ...mentions.map((m, i) => {
        const c = el('span', 'chip', m.label || m.path);
        const x = el('button', 'icon', '');
        x.append(icon('close'));
        x.title = 'Remove';
        x.addEventListener('click', () => {
          mentions.splice(i, 1);
          renderChips();
        });
        c.append(x);
        return c;
      }),
    );
  }

  /** send posts the prompt; the box keeps it until the extension says it was taken (a daemon that did not start keeps it there). */
  function send() {
    const text = input.value.trim();
    if (!text || state.running) return;
    post({ type: 'send', text, mentions: mentions.map(({ label, ...m }) => m) });
  }

  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  input.addEventListener('input', (e) => {
    const ev = /** @type {InputEvent} */ (e);
    if (ev.data === '@') {
      const before = input.value.slice(0, input.selectionStart - 1);
      if (before === '' || /\s$/.test(before)) {
        input.value = before + input.value.slice(input.selectionStart);
        post({ type: 'mention', kind: 'file' });
      }
    }
  });
  $('send').addEventListener('click', send);
  $('switch-act').addEventListener('click', () => post({ type: 'setMode', mode: 'act' }));
  $('cancel').addEventListener('click', () => post({ type: 'cancel' }));
  $('undo').addEventListener('click', () => post({ type: 'undo' }));
  $('checkpoints').addEventListener('click', () => post({ type: 'checkpoints' }));
  $('new').addEventListener('click', () => post({ type: 'newTask' }));
  $('model').addEventListener('click', () => post({ type: 'models' }));
  $('mention-file').addEventListener('click', () => post({ type: 'mention', kind: 'file' }));
  $('mention-selection').addEventListener('click', () => post({ type: 'mention', kind: 'selection' }));
  modeSel.addEventListener('change', () => post({ type: 'setMode', mode: modeSel.value }));
  $('history').addEventListener('click', () => {
    if (!sessionsBox.hidden) {
      sessionsBox.hidden = true;
      return;
    }
    post({ type: 'history' });
  });

  window.addEventListener('message', (event) => {
    const m = event.data;
    switch (m.type) {
      case 'reset':
        log.replaceChildren($('empty') || el('div'));
        $('empty').hidden = m.items.length > 0;
        open.clear();
        for (const item of m.items) render(item);
        renderState(m.state);
        break;
      case 'item':
        render(m.item);
        break;
      case 'state':
        renderState(m.state);
        break;
      case 'sessions': {
        sessionsBox.replaceChildren(el('div', 'sessions-title', m.sessions.length ? 'Resume a task' : 'No saved tasks in this workspace'));
        for (const s of m.sessions) {
          const b = el('button', `session${s.current ? ' current' : ''}`);
          b.append(el('span', 'title', s.title), el('span', 'when', new Date(s.updatedAt).toLocaleString()));
          b.addEventListener('click', () => {
            sessionsBox.hidden = true;
            post({ type: 'resume', sessionId: s.sessionId });
          });
          sessionsBox.append(b);
        }
        sessionsBox.hidden = false;
        break;
      }
      case 'mention':
        mentions.push({ ...m.mention, label: m.label });
        renderChips();
        input.focus();
        break;
      case 'sent':
        input.value = '';
        mentions = [];
        renderChips();
        break;
      case 'models': {
        sessionsBox.replaceChildren(el('div', 'sessions-title', m.models.length ? 'Model for this task' : 'The provider lists no models'));
        for (const id of m.models) {
          const b = el('button', `session model-choice${id === m.current ? ' current' : ''}`);
          b.append(el('span', 'title', id));
          b.addEventListener('click', () => {
            sessionsBox.hidden = true;
            post({ type: 'setModel', model: id });
          });
          sessionsBox.append(b);
        }
        sessionsBox.append(button('Other model…', 'secondary', '', () => {
          sessionsBox.hidden = true;
          post({ type: 'pickModel' });
        }));
        sessionsBox.hidden = false;
        break;
      }
      case 'focus':
        input.focus();
        break;
    }
  });

  renderState(state);
  post({ type: 'ready' });
})();
