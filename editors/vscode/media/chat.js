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

  /** diffBlock shows a unified or compact diff with its added and removed lines coloured. */
  function diffBlock(text) {
    const pre = el('pre', 'diff');
    for (const line of text.split('\n')) {
      if (line.startsWith('```')) continue;
      const cls = line.startsWith('+++') || line.startsWith('---') ? 'meta' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : '';
      const span = el('span', cls, line);
      pre.append(span, '\n');
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
        for (const e of item.entries) {
          const row = el('div', `plan-entry ${e.status || 'pending'}`);
          row.append(icon(e.status === 'completed' ? 'pass-filled' : e.status === 'in_progress' ? 'circle-large-filled' : 'circle-large-outline'), ' ', e.content);
          node.append(row);
        }
        break;
      }
      case 'note':
        node = el('div', `note ${item.level}`);
        node.append(icon(item.level === 'error' ? 'error' : 'info'), ' ', item.text);
        break;
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
  }

  function renderState(s) {
    state = s;
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

  function send() {
    const text = input.value.trim();
    if (!text || state.running) return;
    post({ type: 'send', text, mentions: mentions.map(({ label, ...m }) => m) });
    input.value = '';
    mentions = [];
    renderChips();
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
  $('cancel').addEventListener('click', () => post({ type: 'cancel' }));
  $('undo').addEventListener('click', () => post({ type: 'undo' }));
  $('checkpoints').addEventListener('click', () => post({ type: 'checkpoints' }));
  $('new').addEventListener('click', () => post({ type: 'newTask' }));
  $('model').addEventListener('click', () => post({ type: 'pickModel' }));
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
          b.append(el('span', 'title', s.title || s.sessionId), el('span', 'when', new Date(s.updatedAt).toLocaleString()));
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
      case 'focus':
        input.focus();
        break;
    }
  });

  renderState(state);
  post({ type: 'ready' });
})();
