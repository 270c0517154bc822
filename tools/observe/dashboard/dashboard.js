// The live dashboard of a drkernel run (docs/dashboard.md). It loads the head's snapshot
// (api/snapshot) once, then applies each `snapshot` server-sent event of api/events; EventSource
// reconnects by itself, and the page opens a new one when the browser gives up.
//
// Every string of the snapshot reaches the page as text (textContent, text nodes, attribute values
// through setAttribute): task sources are a model's output and are never parsed as HTML. Missing
// fields and empty lists are drawn as "none yet", never as an error.
//
// For tests: <body data-updates> counts the snapshot events applied, data-connection says the
// state of the event stream, and each chart's <svg data-points> holds its number of points.
'use strict';

(function () {
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const PALETTE = ['#2f5fbf', '#1a7f4b', '#c2362f', '#b86e00', '#7a6fb0', '#0f8a9d', '#8a4f7d'];
  const STALE_HEARTBEAT_SECONDS = 10;

  // ---- values of an untrusted snapshot -------------------------------------------------------
  const number = (value) => (typeof value === 'number' && Number.isFinite(value) ? value : null);
  const count = (value) => number(value) ?? 0;
  const text = (value) => (value === undefined || value === null ? '' : String(value));
  const list = (value) => (Array.isArray(value) ? value : []);
  const record = (value) => (value && typeof value === 'object' && !Array.isArray(value) ? value : {});
  const clamp01 = (value) => Math.min(1, Math.max(0, number(value) ?? 0));

  function fixed(value, digits) {
    const n = number(value);
    return n === null ? '\u2013' : n.toFixed(digits);
  }
  function percent(value) {
    const n = number(value);
    return n === null ? '\u2013' : (n * 100).toFixed(1) + '%';
  }
  function times(value) {
    const n = number(value);
    return n === null ? '\u2013' : n.toFixed(2) + '\u00d7';
  }

  // ---- DOM builders: text only, never HTML -----------------------------------------------------
  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
    return append(node, children);
  }
  function vector(tag, attributes, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, String(value));
    return append(node, children);
  }
  function fill(id, ...children) {
    const node = document.getElementById(id);
    node.replaceChildren();
    append(node, children);
  }
  const none = (what) => element('p', { class: 'none' }, what);

  // A table: columns [{label, cell(row) -> node|string, number: bool}].
  function table(columns, rows, empty) {
    if (rows.length === 0) return none(empty);
    const head = element('tr', {}, ...columns.map((c) => element('th', c.number ? { class: 'number' } : {}, c.label)));
    const body = rows.map((row) =>
      element('tr', {}, ...columns.map((c) => element('td', c.number ? { class: 'number' } : {}, c.cell(row)))));
    return element('table', {}, element('thead', {}, head), element('tbody', {}, ...body));
  }

  // A horizontal bar of `fraction` (0..1) labelled `label`; `high` marks a bar that is nearly full.
  function meter(fraction, label, high) {
    const bar = element('div', { class: 'meter' + (high ? ' high' : '') },
      element('div', { class: 'fill' }), element('span', { class: 'text' }, label));
    bar.firstChild.style.width = (clamp01(fraction) * 100).toFixed(1) + '%';
    return bar;
  }

  // A verdict's badge; its class comes from a fixed table, never from the snapshot's text.
  const VERDICT_CLASSES = {
    correct: 'ok', verified: 'ok', pass: 'ok', passed: 'ok', ok: 'ok',
    hacked: 'bad', hack: 'bad', rejected: 'bad',
    failed: 'warn', fail: 'warn', error: 'warn', incorrect: 'warn', timeout: 'warn',
    screened: 'screened',
  };
  function badge(verdict) {
    const name = text(verdict);
    return element('span', { class: 'badge ' + (VERDICT_CLASSES[name.toLowerCase()] || '') }, name || 'unknown');
  }

  // ---- charts ----------------------------------------------------------------------------------
  // Round tick positions covering [low, high]: steps of 1, 2 or 5 times a power of ten.
  function ticks(low, high, wanted, integers) {
    let span = high - low;
    if (!(span > 0)) span = Math.abs(high) || 1;
    let step = Math.pow(10, Math.floor(Math.log10(span / wanted)));
    for (const factor of [1, 2, 5, 10]) {
      if (span / (step * factor) <= wanted) { step *= factor; break; }
    }
    if (integers) step = Math.max(1, Math.round(step));
    const first = Math.floor(low / step) * step;
    const last = Math.ceil(high / step) * step;
    const values = [];
    for (let v = first; v <= last + step / 2; v += step) values.push(Number(v.toPrecision(12)));
    if (values.length < 2) values.push(first + step);
    return values;
  }

  // Draws `series` ([{name, points: [[x, y]]}]) into the <svg> `id` as lines over steps.
  // options: format(y) for the axis, floor (a value the y axis always shows), reference (a y drawn
  // dashed), fraction (a y axis of shares: 0..1 at least).
  function line_chart(id, series, options) {
    const plot = document.getElementById(id);
    const legend = plot.parentNode.querySelector('.legend');
    const width = 460, height = 200, left = 48, right = 12, top = 10, bottom = 30;
    plot.setAttribute('viewBox', `0 0 ${width} ${height}`);
    plot.replaceChildren();
    legend.replaceChildren();

    const drawn = series.map((s, i) => ({
      name: s.name, color: PALETTE[i % PALETTE.length],
      points: s.points.filter((p) => number(p[0]) !== null && number(p[1]) !== null).sort((a, b) => a[0] - b[0]),
    }));
    const all = drawn.flatMap((s) => s.points);
    plot.setAttribute('data-points', all.length);
    plot.setAttribute('data-series', drawn.filter((s) => s.points.length > 0).length);
    if (all.length === 0) {
      plot.appendChild(vector('text', { class: 'empty', x: width / 2, y: height / 2, 'text-anchor': 'middle' },
        'no steps yet'));
      return;
    }

    const xs = all.map((p) => p[0]);
    const ys = all.map((p) => p[1]);
    if (options.floor !== undefined) ys.push(options.floor);
    if (options.reference !== undefined) ys.push(options.reference);
    if (options.fraction) ys.push(0, 1);
    const lowest = (values) => values.reduce((a, b) => Math.min(a, b));
    const highest = (values) => values.reduce((a, b) => Math.max(a, b));
    const xTicks = ticks(lowest(xs), highest(xs), 8, true);
    const yTicks = ticks(lowest(ys), highest(ys), 5, false);
    const [x0, x1] = [xTicks[0], xTicks[xTicks.length - 1]];
    const [y0, y1] = [yTicks[0], yTicks[yTicks.length - 1]];
    const sx = (x) => left + ((x - x0) / (x1 - x0 || 1)) * (width - left - right);
    const sy = (y) => height - bottom - ((y - y0) / (y1 - y0 || 1)) * (height - top - bottom);
    const format = options.format || ((y) => String(y));

    for (const y of yTicks) {
      plot.appendChild(vector('line', { class: 'grid-line', x1: left, x2: width - right, y1: sy(y), y2: sy(y) }));
      plot.appendChild(vector('text', { class: 'tick', x: left - 6, y: sy(y) + 4, 'text-anchor': 'end' }, format(y)));
    }
    for (const x of xTicks) {
      plot.appendChild(vector('text', { class: 'tick', x: sx(x), y: height - bottom + 16, 'text-anchor': 'middle' }, x));
    }
    const baseline = height - bottom;
    plot.appendChild(vector('line', { class: 'axis', x1: left, x2: width - right, y1: baseline, y2: baseline }));
    plot.appendChild(vector('line', { class: 'axis', x1: left, x2: left, y1: top, y2: height - bottom }));
    plot.appendChild(vector('text', { class: 'tick', x: width - right, y: height - 2, 'text-anchor': 'end' }, 'step'));
    if (options.reference !== undefined) {
      const y = sy(options.reference);
      plot.appendChild(vector('line', { class: 'reference', x1: left, x2: width - right, y1: y, y2: y }));
    }

    const marks = all.length <= 400;
    for (const s of drawn) {
      if (s.points.length === 0) continue;
      const path = s.points.map((p) => `${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(' ');
      plot.appendChild(vector('polyline', { class: 'series', points: path, stroke: s.color }));
      if (marks) {
        for (const p of s.points) {
          plot.appendChild(vector('circle', { cx: sx(p[0]), cy: sy(p[1]), r: 2.8, fill: s.color },
            vector('title', {}, `${s.name}, step ${p[0]}: ${format(p[1])}`)));
        }
      }
      append(legend, [element('span', {}, element('span', { class: 'swatch' }), s.name)]);
      legend.lastChild.firstChild.style.background = s.color;
    }
  }

  // ---- sections ----------------------------------------------------------------------------------
  function render_run(run) {
    const items = [
      ['topology', text(run.topology)],
      ['run', text(run.run_dir)],
      ['training', text(run.training)],
      ['state', run.finished === true ? 'finished' : 'running'],
    ];
    const stamp = number(run.now_unix_ms);
    if (stamp !== null) items.push(['at', new Date(stamp).toLocaleTimeString()]);
    fill('run', ...items.filter(([, v]) => v !== '')
      .map(([k, v]) => element('div', {}, element('dt', {}, k), element('dd', {}, v))));
    document.body.setAttribute('data-finished', run.finished === true ? 'true' : 'false');
  }

  const counted = (n, one, many) => `${n} ${n === 1 ? one : many || one + 's'}`;

  function card(label, value, note) {
    return element('div', { class: 'card' }, element('div', { class: 'label' }, label),
      element('div', { class: 'value' }, value), note ? element('div', { class: 'note' }, note) : null);
  }

  function render_summary(snapshot) {
    const steps = list(snapshot.steps).map(record);
    const last = steps.length > 0 ? steps[steps.length - 1] : {};
    const best = steps.map((s) => number(s.best_speedup)).filter((v) => v !== null);
    const cache = record(snapshot.compile_cache);
    const lookups = count(cache.hits) + count(cache.misses);
    const evaluations = list(snapshot.evaluators).reduce((sum, e) => sum + count(record(e).evaluations), 0);
    const restarts = list(snapshot.processes).reduce((sum, p) => sum + count(record(p).restarts), 0);
    const dead = list(snapshot.actors).reduce((sum, a) => sum + count(record(a).dead_letters), 0);
    fill('summary',
      card('steps', String(steps.length), steps.length ? 'last: step ' + text(last.step) : 'none yet'),
      card('mean reward', fixed(last.mean_reward, 3), 'last step'),
      card('best speedup', times(best.length ? best.reduce((a, b) => Math.max(a, b)) : null), 'last step: ' + times(last.best_speedup)),
      card('correct', percent(last.correct_fraction), 'last step'),
      card('evaluations', String(evaluations), counted(list(snapshot.evaluators).length, 'evaluator')),
      card('compile cache hits', lookups ? percent(count(cache.hits) / lookups) : '\u2013', counted(lookups, 'lookup')),
      card('restarts', String(restarts), counted(list(snapshot.processes).length, 'process', 'processes')),
      card('dead letters', String(dead), counted(list(snapshot.actors).length, 'actor')));
  }

  // The charts of the step fields, in the order of the page: id, caption, note, and
  // series(steps) -> [{name, points}] with the chart's options.
  const share = (y) => (y * 100).toFixed(0) + '%';
  const per_step = (steps, name, field) => [{ name, points: steps.map((s) => [number(s.step), number(s[field])]) }];
  const CHARTS = [
    {
      id: 'chart-reward', caption: 'Mean reward per step',
      series: (steps) => per_step(steps, 'mean reward', 'mean_reward'),
      options: { format: (y) => y.toFixed(2), floor: 0 },
    },
    {
      id: 'chart-speedup', caption: 'Best speedup per step', note: '(dashed: the reference, 1\u00d7)',
      series: (steps) => per_step(steps, 'best speedup', 'best_speedup'),
      options: { format: (y) => y.toFixed(1) + '\u00d7', floor: 0, reference: 1 },
    },
    {
      id: 'chart-fastp', caption: 'Fast@p over time', note: '(share of tasks correct and p\u00d7 faster)',
      series: (steps) => [...new Set(steps.flatMap((s) => Object.keys(record(s.fast_p))))]
        .sort((a, b) => parseFloat(a) - parseFloat(b))
        .map((p) => ({ name: 'Fast@' + p, points: steps.map((s) => [number(s.step), number(record(s.fast_p)[p])]) })),
      options: { format: share, fraction: true },
    },
    {
      id: 'chart-correct', caption: 'Correct share per step',
      series: (steps) => per_step(steps, 'correct share', 'correct_fraction'),
      options: { format: share, fraction: true },
    },
    {
      id: 'chart-seconds', caption: 'Seconds per step',
      series: (steps) => per_step(steps, 'seconds', 'seconds'),
      options: { format: (y) => Number(y.toFixed(2)) + ' s', floor: 0 },
    },
  ];

  function add_chart_panels() {
    const curves = document.getElementById('curves');
    for (const chart of CHARTS) {
      const plot = vector('svg', { id: chart.id, class: 'plot', 'data-points': 0 });
      const note = chart.note ? element('small', {}, chart.note) : null;
      const caption = element('figcaption', {}, chart.caption, note ? ' ' : null, note);
      curves.insertBefore(element('figure', { class: 'panel chart' }, caption, plot, element('div', { class: 'legend' })),
        curves.lastElementChild);
    }
  }

  function render_charts(snapshot) {
    const steps = list(snapshot.steps).map(record);
    for (const chart of CHARTS) line_chart(chart.id, chart.series(steps), chart.options);
  }

  function render_outcomes(snapshot) {
    const outcomes = record(snapshot.outcomes);
    const kinds = ['correct', 'hacked', 'failed', 'screened'];
    const total = kinds.reduce((sum, k) => sum + count(outcomes[k]), 0);
    if (total === 0) {
      fill('outcomes', none('no evaluations yet'));
    } else {
      const bar = element('div', { class: 'shares', 'data-total': total });
      const legend = element('div', { class: 'share-legend' });
      for (const kind of kinds) {
        const share = count(outcomes[kind]) / total;
        const part = element('div', { class: 'share-' + kind, title: `${kind}: ${count(outcomes[kind])}` });
        part.style.width = (share * 100).toFixed(2) + '%';
        bar.appendChild(part);
        legend.appendChild(element('div', {}, element('span', { class: 'swatch share-' + kind }),
          `${kind} ${count(outcomes[kind])} (${percent(share)})`));
      }
      fill('outcomes', bar, legend);
    }
    const reasons = list(snapshot.verifier_reasons).map(record).slice().sort((a, b) => count(b.count) - count(a.count));
    const most = Math.max(1, ...reasons.map((r) => count(r.count)));
    fill('reasons', table([
      { label: 'check', cell: (r) => element('span', { class: 'mono' }, text(r.check)) },
      { label: 'caught', cell: (r) => meter(count(r.count) / most, String(count(r.count))) },
    ], reasons, 'no check has failed'));
  }

  // Task sources the reader opened stay open across updates.
  const open_tasks = new Set();

  function render_tasks(snapshot) {
    const tasks = list(snapshot.tasks).map(record);
    if (tasks.length === 0) {
      fill('tasks', none('no verified kernel yet'));
      return;
    }
    const head = element('div', { class: 'task-head' },
      element('span', {}, 'task'), element('span', {}, 'best speedup'), element('span', {}, 'verdict'),
      element('span', {}, 'language'), element('span', {}, 'candidate'), element('span', {}, 'failed checks'));
    const rows = tasks.map((task) => {
      const name = text(task.task);
      const checks = list(task.failed_checks).map(text);
      const row = element('details', { class: 'task', 'data-task': name },
        element('summary', {},
          element('span', { class: 'task-name' }, name),
          element('span', {}, times(task.best_speedup)),
          element('span', {}, badge(task.verdict)),
          element('span', {}, text(task.language)),
          element('span', { class: 'mono' }, text(task.candidate_id)),
          element('span', { class: 'checks' }, checks.join(', '))),
        element('pre', { class: 'source' }, element('code', {}, text(task.source) || '(no source recorded)')));
      if (open_tasks.has(name)) row.open = true;
      row.addEventListener('toggle', () => (row.open ? open_tasks.add(name) : open_tasks.delete(name)));
      return row;
    });
    fill('tasks', head, ...rows);
  }

  function render_evaluators(snapshot) {
    fill('evaluators', table([
      { label: 'evaluator', cell: (e) => text(e.name) },
      { label: 'evaluations', number: true, cell: (e) => String(count(e.evaluations)) },
      { label: 'utilisation', cell: (e) => meter(e.utilisation, percent(e.utilisation)) },
      { label: 'GPU busy', cell: (e) => meter(e.gpu_busy_fraction, percent(e.gpu_busy_fraction)) },
    ], list(snapshot.evaluators).map(record), 'no evaluator reported yet'));
  }

  function render_compile_cache(snapshot) {
    const cache = record(snapshot.compile_cache);
    const hits = count(cache.hits), misses = count(cache.misses);
    const lookups = hits + misses;
    fill('compile-cache',
      lookups === 0 ? none('no compilation yet') : meter(hits / lookups, `hit rate ${percent(hits / lookups)}`),
      table([
        { label: 'hits', number: true, cell: () => String(hits) },
        { label: 'misses', number: true, cell: () => String(misses) },
        { label: 'lookups', number: true, cell: () => String(lookups) },
      ], [cache], ''));
  }

  function render_actors(snapshot) {
    fill('actors', table([
      { label: 'actor', cell: (a) => element('span', { class: 'mono' }, text(a.name)) },
      { label: 'role', cell: (a) => text(a.role) },
      { label: 'process', cell: (a) => text(a.process) },
      { label: 'state', cell: (a) => text(a.state) },
      {
        label: 'mailbox', cell: (a) => {
          const depth = count(a.mailbox_depth), capacity = count(a.mailbox_capacity);
          const fraction = capacity > 0 ? depth / capacity : 0;
          return meter(fraction, capacity > 0 ? `${depth} / ${capacity}` : String(depth), fraction >= 0.8);
        },
      },
      { label: 'messages/s', number: true, cell: (a) => fixed(a.messages_per_second, 1) },
      {
        label: 'dead letters', number: true,
        cell: (a) => element('span', count(a.dead_letters) > 0 ? { class: 'cause' } : {}, String(count(a.dead_letters))),
      },
    ], list(snapshot.actors).map(record), 'no actor reported yet'));
  }

  function render_processes(snapshot) {
    fill('processes', table([
      { label: 'process', cell: (p) => element('span', { class: 'mono' }, text(p.name)) },
      { label: 'pid', number: true, cell: (p) => (number(p.pid) === null ? '' : String(p.pid)) },
      { label: 'status', cell: (p) => text(p.status) },
      { label: 'restarts', number: true, cell: (p) => String(count(p.restarts)) },
      { label: 'last cause', cell: (p) => element('span', { class: 'cause' }, text(p.last_cause)) },
    ], list(snapshot.processes).map(record), 'no process reported yet'));
  }

  function render_nodes(snapshot) {
    fill('nodes', table([
      { label: 'node', cell: (n) => element('span', { class: 'mono' }, text(n.name)) },
      { label: 'state', cell: (n) => text(n.state) },
      {
        label: 'last heartbeat', number: true, cell: (n) => {
          const age = number(n.last_heartbeat_age_seconds);
          if (age === null) return '\u2013';
          const label = age.toFixed(1) + ' s ago';
          return age > STALE_HEARTBEAT_SECONDS ? element('span', { class: 'badge stale' }, label) : label;
        },
      },
    ], list(snapshot.nodes).map(record), 'one node: the head'));
  }

  // ---- applying snapshots ----------------------------------------------------------------------
  let updates = 0;
  let last_received = null;

  // Draws `value`, a snapshot; `received` says whether it came from the head (not the empty page).
  function render(value, received) {
    const snapshot = record(value);
    render_run(record(snapshot.run));
    render_summary(snapshot);
    render_charts(snapshot);
    render_outcomes(snapshot);
    render_tasks(snapshot);
    render_evaluators(snapshot);
    render_compile_cache(snapshot);
    render_actors(snapshot);
    render_processes(snapshot);
    render_nodes(snapshot);
    document.body.setAttribute('data-steps', list(snapshot.steps).length);
    if (!received) return;
    document.getElementById('problem').hidden = true;
    last_received = Date.now();
    show_freshness();
  }

  function problem(message) {
    const node = document.getElementById('problem');
    node.textContent = message;
    node.hidden = false;
  }

  function show_freshness() {
    if (last_received === null) return;
    const seconds = Math.round((Date.now() - last_received) / 1000);
    document.getElementById('freshness').textContent = seconds < 2 ? 'updated now' : `updated ${seconds} s ago`;
  }

  function set_connection(state) {
    document.body.setAttribute('data-connection', state);
    document.getElementById('connection-text').textContent = state;
  }

  // The query of the page's address goes with its requests (a token, where the head asks for one).
  const query = window.location.search;
  let retry_ms = 1000;

  function listen() {
    set_connection('connecting');
    const source = new EventSource('api/events' + query);
    source.onopen = () => {
      retry_ms = 1000;
      set_connection('live');
    };
    source.addEventListener('snapshot', (event) => {
      try {
        render(JSON.parse(event.data), true);
      } catch (error) {
        problem('could not draw an update: ' + error.message);
        return;
      }
      updates += 1;
      document.body.setAttribute('data-updates', updates);
    });
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) {
        set_connection('reconnecting');
        return;
      }
      // The browser gave up (an answer that was no event stream): try again, less and less often.
      source.close();
      set_connection('offline');
      setTimeout(listen, retry_ms);
      retry_ms = Math.min(retry_ms * 2, 30000);
    };
  }

  // A fault of the page itself shows where a reader (and a test) sees it.
  window.addEventListener('error', (event) => problem('the page failed: ' + event.message));
  add_chart_panels();
  render({}, false);
  fetch('api/snapshot' + query, { cache: 'no-store' })
    .then((answer) => (answer.ok ? answer.json() : Promise.reject(new Error('HTTP ' + answer.status))))
    .then((snapshot) => {
      // An event that arrived first is newer than this answer.
      if (updates === 0) render(snapshot, true);
    })
    .catch((error) => problem('could not load the snapshot: ' + error.message));
  listen();
  setInterval(show_freshness, 1000);
})();
