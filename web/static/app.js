// app.js — the page of gridzero serve: play and analyse on boards drawn as themselves
// (m,n,k as a square grid with Gomoku coordinates, Sanling as the rhombus of the
// triangular lattice with offset rows), and a dashboard of a run directory. Plain JS,
// no framework, no network but this server. The API it uses is in the README.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

// ---- talking to the server ----

async function api(path, body) {
  const opts = body === undefined ? {method: 'GET'}
    : {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)};
  let res;
  try {
    res = await fetch('/api/' + path, opts);
  } catch (e) {
    throw new Error('the server does not answer (' + e.message + ')');
  }
  let data = null;
  try { data = await res.json(); } catch (e) { /* not JSON */ }
  if (!res.ok) {
    const err = new Error(data && data.error ? data.error : 'HTTP ' + res.status);
    err.status = res.status;
    throw err;
  }
  return data;
}

function showError(e) {
  const box = $('error');
  if (!e) { box.hidden = true; return; }
  box.textContent = e.message || String(e);
  box.hidden = false;
}

function svg(parent, tag, attrs, text) {
  const el = document.createElementNS(SVGNS, tag);
  for (const k in attrs) el.setAttribute(k, attrs[k]);
  if (text !== undefined) el.textContent = text;
  parent.appendChild(el);
  return el;
}

function pct(x) { return Math.round(100 * x) + '%'; }

function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }

// ---- state of the page ----

const page = {
  info: null,      // GET /api/info
  st: null,        // the session's state (the last answer)
  line: [],        // the longest line of moves seen in this game (for back / forward)
  hint: null,      // {action, top} of the last hint
  polling: null,   // timer while a search runs
  autoplay: true,  // ask the seat's player to move when it is not a person's turn
  run: null,       // GET /api/run
  runTimer: null,
};

const PLAYER_NAMES = ['first', 'second', 'third'];
const SEAT_COLOURS = {mnk: ['#111', '#f7f7f7'], sanling: ['#d1342f', '#2466c4', '#2a9d3c']};

function presets(info) {
  const list = [{label: 'server default (' + describeGame(info.game) + ')', game: null, conf: info.game}];
  const add = (label, g) => list.push({label, game: g, conf: g});
  add('tic-tac-toe', {name: 'mnk', rows: 3, cols: 3, k: 3});
  add('Gomoku 9×9', {name: 'mnk', rows: 9, cols: 9, k: 5});
  add('Gomoku 15×15', {name: 'mnk', rows: 15, cols: 15, k: 5});
  add('Sanling 9, three players', {name: 'sanling', size: 9, players: 3, moves: 36});
  add('Sanling 13, three players', {name: 'sanling', size: 13, players: 3, moves: 36});
  add('Sanling 13, two players', {name: 'sanling', size: 13, players: 2, moves: 36});
  return list;
}

function describeGame(g) {
  if (!g || !g.name) return '?';
  if (g.name === 'mnk') return `m,n,k ${g.rows}×${g.cols} k=${g.k}`;
  if (g.name === 'sanling') return `Sanling ${g.size}, ${g.players} players`;
  return g.name;
}

function playersOf(conf) { return conf && conf.name === 'sanling' ? conf.players : 2; }

function seatColour(gameName, p) {
  return (SEAT_COLOURS[gameName] || SEAT_COLOURS.sanling)[p];
}

// ---- new game form ----

function buildSeats() {
  const sel = $('game-select');
  const pr = page.presets[sel.value];
  const n = playersOf(pr.conf);
  const box = $('seats');
  clear(box);
  for (let p = 0; p < n; p++) {
    const row = document.createElement('div');
    row.className = 'seat';
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = seatColour(pr.conf.name, p);
    const lab = document.createElement('span');
    lab.textContent = 'seat ' + (p + 1);
    const inp = document.createElement('input');
    inp.type = 'text';
    inp.setAttribute('list', 'player-kinds');
    inp.id = 'seat-' + p;
    // the server's model plays the server's game; other games get pure MCTS by default
    inp.value = p === 0 ? 'human' : pr.game ? 'mcts:' + page.info.simulations * 4 : page.info.hint;
    row.append(sw, lab, inp);
    box.appendChild(row);
  }
}

async function newGame(body) {
  stopPolling();
  if (!body) {
    const pr = page.presets[$('game-select').value];
    const n = playersOf(pr.conf);
    const players = [];
    for (let p = 0; p < n; p++) players.push($('seat-' + p).value.trim() || 'human');
    body = {players};
    if (pr.game) body.game = pr.game;
  }
  const old = page.st && page.st.session;
  const st = await api('new', body);
  if (old) api('close', {session: old}).catch(() => {});
  page.line = st.moves.slice();
  page.hint = null;
  page.autoplay = true;
  setState(st);
}

// ---- the game ----

function humanSeat(st, seat) { return st.players[seat] === 'human'; }
function searching(st) { return st && st.search && st.search.status === 'running'; }

// The game menu names the game on the board: its preset, or an entry made for it (a
// game started through the API, a replay, a link), never another game's label.
function syncGameMenu(st) {
  const sel = $('game-select');
  if (!sel || !page.presets || !st.game || !st.game.config) return;
  const want = describeGame(st.game.config);
  const cur = page.presets[sel.value];
  if (cur && describeGame(cur.conf) === want) return;
  let i = page.presets.findIndex((p) => describeGame(p.conf) === want);
  if (i < 0) {
    page.presets.push({label: 'this game (' + want + ')', game: st.game.config, conf: st.game.config});
    i = page.presets.length - 1;
    const o = document.createElement('option');
    o.value = i;
    o.textContent = page.presets[i].label;
    sel.appendChild(o);
  }
  sel.value = i;
  buildSeats();
}

function setState(st) {
  page.st = st;
  syncGameMenu(st);
  // the line: keep later moves while the current moves are a prefix of it
  const m = st.moves;
  const prefix = m.length <= page.line.length && m.every((x, i) => x === page.line[i]);
  if (!prefix) page.line = m.slice();
  render();
  if (searching(st)) {
    startPolling();
  } else {
    stopPolling();
    maybeAutoplay();
  }
}

function maybeAutoplay() {
  const st = page.st;
  if (!st || st.over || !page.autoplay || st.to_move === null) return;
  if (humanSeat(st, st.to_move)) return;
  // a finished search that was not a move (a hint, an analysis) does not trigger one
  const s = st.search;
  if (s && s.kind === 'genmove' && s.status !== 'done' && s.ply === st.ply) return;
  api('genmove', {session: st.session}).then(setState).catch(showError);
}

function startPolling() {
  if (page.polling) return;
  page.polling = setInterval(async () => {
    try {
      const st = await api('state', {session: page.st.session});
      if (!searching(st)) stopPolling();
      setState(st);
    } catch (e) {
      stopPolling();
      showError(e);
    }
  }, 250);
}

function stopPolling() {
  if (page.polling) clearInterval(page.polling);
  page.polling = null;
}

async function act(path, extra) {
  showError(null);
  try {
    const st = await api(path, Object.assign({session: page.st.session}, extra || {}));
    setState(st);
    return st;
  } catch (e) {
    if (e.status === 404 && page.st) {
      showError(new Error(e.message));
    } else {
      showError(e);
    }
    return null;
  }
}

function clickPoint(a) {
  const st = page.st;
  if (!st || st.over) return;
  if (!humanSeat(st, st.to_move)) {
    showError(new Error("it is not a person's turn: seat " + (st.to_move + 1) + ' is ' +
      st.players[st.to_move]));
    return;
  }
  if (!st.legal.includes(a)) return;
  page.hint = null;
  page.autoplay = true;
  // a move off the line starts a new line
  act('move', {action: a});
}

// ---- drawing the board ----

function render() {
  const st = page.st;
  if (!st) return;
  const g = st.game;
  const board = $('board');
  clear(board);
  board.setAttribute('class', g.lattice === 'hex' ? 'hex' : 'mnk');
  const geo = g.lattice === 'hex' ? drawHex(board, st) : drawSquare(board, st);
  drawOverlay(board, st, geo);
  renderStatus(st);
  renderMoves(st);
  renderAnalysis(st);
  renderValueGraph(st);
  renderScore(st);
}

// A square grid with Gomoku coordinates (columns lettered from the left, rows numbered
// from the bottom: the server's labels). Big boards put the stones on the intersections
// as Gomoku boards do; small ones (tic-tac-toe) in the cells.
function drawSquare(board, st) {
  const g = st.game, R = g.rows, C = g.cols;
  const cells = Math.max(R, C) <= 7;
  const d = Math.max(18, Math.min(cells ? 120 : 40, Math.floor(560 / Math.max(R, C))));
  const m = cells ? d * 0.6 : d * 1.1;
  const span = (n) => (cells ? n : n - 1) * d;
  const W = 2 * m + span(C), H = 2 * m + span(R);
  const off = cells ? d / 2 : 0;
  board.setAttribute('viewBox', `0 0 ${W} ${H}`);
  board.setAttribute('font-size', Math.round(Math.min(d * 0.4, 14) * 10) / 10);
  svg(board, 'rect', {class: 'board-bg', x: 0, y: 0, width: W, height: H, rx: 6});
  const pos = (a) => [m + off + (a % C) * d, m + off + Math.floor(a / C) * d];
  for (let r = 0; r < (cells ? R + 1 : R); r++) svg(board, 'line', {class: 'grid', x1: m, y1: m + r * d, x2: m + span(C), y2: m + r * d});
  for (let c = 0; c < (cells ? C + 1 : C); c++) svg(board, 'line', {class: 'grid', x1: m + c * d, y1: m, x2: m + c * d, y2: m + span(R)});
  for (let c = 0; c < C; c++) {
    svg(board, 'text', {class: 'label', x: m + off + c * d, y: m * 0.45}, g.col_labels[c]);
    svg(board, 'text', {class: 'label', x: m + off + c * d, y: H - m * 0.45}, g.col_labels[c]);
  }
  for (let r = 0; r < R; r++) {
    svg(board, 'text', {class: 'label', x: m * 0.45, y: m + off + r * d}, g.row_labels[r]);
    svg(board, 'text', {class: 'label', x: W - m * 0.45, y: m + off + r * d}, g.row_labels[r]);
  }
  const geo = {pos, radius: d * (cells ? 0.36 : 0.45), d};
  drawStones(board, st, geo);
  const line = winningLine(st);
  if (line) {
    const [x1, y1] = pos(line[0]), [x2, y2] = pos(line[1]);
    svg(board, 'line', {class: 'winline', x1, y1, x2, y2});
  }
  drawPoints(board, st, geo);
  return geo;
}

// The rhombus of the triangular lattice: row r is shifted half a point right of the row
// above, so the six neighbours (r,c±1), (r±1,c), (r-1,c+1), (r+1,c-1) are equally far.
function drawHex(board, st) {
  const g = st.game, N = g.rows;
  const d = Math.max(16, Math.min(40, Math.floor(620 / (1.5 * N))));
  const h = d * Math.sqrt(3) / 2, m = d * 1.2;
  const W = 2 * m + (N - 1) * d * 1.5, H = 2 * m + (N - 1) * h;
  board.setAttribute('viewBox', `0 0 ${W} ${H}`);
  board.setAttribute('font-size', Math.round(Math.min(d * 0.45, 14) * 10) / 10);
  svg(board, 'rect', {class: 'board-bg', x: 0, y: 0, width: W, height: H, rx: 6});
  const xy = (r, c) => [m + (c + r / 2) * d, m + r * h];
  const pos = (a) => xy(Math.floor(a / N), a % N);
  // scored triangles: the unit triangles whose three points are one player's
  const b = st.board;
  for (let r = 0; r + 1 < N; r++) {
    for (let c = 0; c + 1 < N; c++) {
      const shapes = [[r * N + c, r * N + c + 1, (r + 1) * N + c],
        [r * N + c + 1, (r + 1) * N + c, (r + 1) * N + c + 1]];
      for (const t of shapes) {
        const p = b[t[0]];
        if (p >= 0 && b[t[1]] === p && b[t[2]] === p) {
          svg(board, 'polygon', {class: 'tri p' + p, points: t.map((a) => pos(a).join(',')).join(' ')});
        }
      }
    }
  }
  // lattice edges: to (r,c+1), (r+1,c), (r+1,c-1)
  for (let r = 0; r < N; r++) {
    for (let c = 0; c < N; c++) {
      const [x, y] = xy(r, c);
      const nbs = [[r, c + 1], [r + 1, c], [r + 1, c - 1]];
      for (const [rr, cc] of nbs) {
        if (rr < N && cc >= 0 && cc < N) {
          const [x2, y2] = xy(rr, cc);
          svg(board, 'line', {class: 'grid', x1: x, y1: y, x2, y2});
        }
      }
    }
  }
  for (let c = 0; c < N; c++) {
    const [x0, y0] = xy(0, c), [x1, y1] = xy(N - 1, c);
    svg(board, 'text', {class: 'label', x: x0, y: y0 - m * 0.6}, g.col_labels[c]);
    svg(board, 'text', {class: 'label', x: x1, y: y1 + m * 0.6}, g.col_labels[c]);
  }
  for (let r = 0; r < N; r++) {
    const [x0, y0] = xy(r, 0), [x1, y1] = xy(r, N - 1);
    svg(board, 'text', {class: 'label', x: x0 - m * 0.6, y: y0}, g.row_labels[r]);
    svg(board, 'text', {class: 'label', x: x1 + m * 0.6, y: y1}, g.row_labels[r]);
  }
  const geo = {pos, radius: d * 0.34, d};
  // the frontier: the empty points next to a stone (the legal moves)
  if (!st.over) {
    for (const a of st.legal) {
      const [x, y] = pos(a);
      svg(board, 'circle', {class: 'frontier', cx: x, cy: y, r: d * 0.22});
    }
  }
  drawStones(board, st, geo);
  drawPoints(board, st, geo);
  return geo;
}

function drawStones(board, st, geo) {
  st.board.forEach((v, a) => {
    if (v === -1) return;
    const [x, y] = geo.pos(a);
    svg(board, 'circle', {class: 'stone ' + (v === -2 ? 'neutral' : 'p' + v), cx: x, cy: y, r: geo.radius});
  });
  if (st.last >= 0) {
    const [x, y] = geo.pos(st.last);
    svg(board, 'circle', {class: 'last', cx: x, cy: y, r: geo.radius * 0.45});
  }
}

// One clickable point per board point (the page's tests count them).
function drawPoints(board, st, geo) {
  const layer = svg(board, 'g', {class: 'points'});
  for (let a = 0; a < st.board.length; a++) {
    const [x, y] = geo.pos(a);
    const c = svg(layer, 'circle', {class: 'pt', cx: x, cy: y, r: geo.d * 0.48, 'data-action': a});
    c.addEventListener('click', () => clickPoint(a));
    const t = document.createElementNS(SVGNS, 'title');
    t.textContent = moveName(st, a);
    c.appendChild(t);
  }
}

function moveName(st, a) {
  const g = st.game;
  const r = Math.floor(a / g.cols), c = a % g.cols;
  return g.col_labels[c] + g.row_labels[r];
}

// The k in a row that ended an m,n,k game: [from, to] as actions, or null.
function winningLine(st) {
  if (st.game.name !== 'mnk' || !st.over || !st.result || st.result[0] === 0) return null;
  const g = st.game, R = g.rows, C = g.cols, k = g.config.k, b = st.board;
  const who = st.result[0] > 0 ? 0 : 1;
  const dirs = [[0, 1], [1, 0], [1, 1], [1, -1]];
  for (let a = 0; a < b.length; a++) {
    if (b[a] !== who) continue;
    const r = Math.floor(a / C), c = a % C;
    for (const [dr, dc] of dirs) {
      const pr = r - dr, pc = c - dc;
      if (pr >= 0 && pr < R && pc >= 0 && pc < C && b[pr * C + pc] === who) continue; // not a line's start
      let n = 1;
      while (r + n * dr < R && c + n * dc >= 0 && c + n * dc < C && b[(r + n * dr) * C + c + n * dc] === who) n++;
      if (n >= k) return [a, (r + (n - 1) * dr) * C + c + (n - 1) * dc];
    }
  }
  return null;
}

// The analysis drawn on the board: a heatmap of visits or policy with the numbers, the
// principal variation's first moves, and the last hint.
function drawOverlay(board, st, geo) {
  const layer = svg(board, 'g', {class: 'overlay'});
  board.insertBefore(layer, board.querySelector('.points'));
  const s = st.search;
  if ($('show-overlay').checked && s && s.kind === 'analyze' && s.ply === st.ply) {
    const mode = document.querySelector('input[name=overlay]:checked').value;
    const vals = mode === 'visits' ? s.visits : s.policy;
    const max = Math.max(1e-9, ...vals);
    const total = vals.reduce((x, y) => x + y, 0) || 1;
    vals.forEach((v, a) => {
      const f = v / max;
      if (!(v > 0) || f < 0.02) return; // a pure search's one visit to every move is noise
      const [x, y] = geo.pos(a);
      svg(layer, 'circle', {class: 'heat', cx: x, cy: y, r: geo.radius * (0.35 + 0.6 * Math.sqrt(f)),
        'fill-opacity': 0.25 + 0.65 * f});
      const share = v / total;
      if (share >= 0.01 || f > 0.5) {
        const label = mode === 'visits' ? String(v) : Math.round(100 * share) + '';
        svg(layer, 'text', {class: 'heat-text', x, y}, label);
      }
    });
    s.pv.slice(0, 6).forEach((mv, i) => {
      const a = actionOf(st, mv);
      if (a < 0 || i === 0) return;
      const [x, y] = geo.pos(a);
      svg(layer, 'text', {class: 'pv-text', x: x + geo.radius * 0.7, y: y - geo.radius * 0.7}, String(i + 1));
    });
  }
  if (page.hint && page.hint.ply === st.ply) {
    const [x, y] = geo.pos(page.hint.action);
    svg(layer, 'circle', {class: 'hint-ring', cx: x, cy: y, r: geo.radius});
  }
}

function actionOf(st, mv) {
  const g = st.game;
  for (let r = 0; r < g.rows; r++) {
    for (let c = 0; c < g.cols; c++) {
      if (g.col_labels[c] + g.row_labels[r] === mv) return r * g.cols + c;
    }
  }
  return -1;
}

function seatName(st, p) {
  const who = st.players[p] === 'human' ? 'you' : st.players[p];
  if (st.game.name === 'mnk') return (p === 0 ? 'Black' : 'White') + ' (' + who + ')';
  return ['Red', 'Blue', 'Green'][p] + ' (' + who + ')';
}

function renderStatus(st) {
  const el = $('status');
  const s = st.search;
  let text;
  if (st.over) {
    const z = st.result, best = Math.max(...z);
    const winners = z.map((v, p) => v === best ? p : -1).filter((p) => p >= 0);
    text = winners.length === z.length ? 'Game over: a draw'
      : 'Game over: ' + winners.map((p) => seatName(st, p)).join(' and ') + (winners.length > 1 ? ' share first place' : ' wins');
    text += ' (' + z.map((v) => (v > 0 ? '+' : '') + v).join(', ') + ')';
  } else {
    text = seatName(st, st.to_move) + ' to move · move ' + (st.ply + 1);
  }
  el.textContent = text;
  el.dataset.over = st.over ? '1' : '0';
  const bar = $('progress');
  if (s && s.status === 'running') {
    bar.hidden = false;
    const lim = page.info.limits.seconds;
    const f = s.target > 0 ? Math.min(1, s.progress / s.target) : Math.min(1, s.seconds / lim);
    $('progress-bar').style.width = (100 * f).toFixed(1) + '%';
    $('progress-text').textContent = (s.kind === 'genmove' ? s.player + ' thinks' : 'analysing with ' + s.evaluator) +
      ': ' + s.progress + (s.target ? ' / ' + s.target : '') + (s.kind === 'genmove' && !s.target ? ' nodes' : ' playouts') +
      ', ' + s.seconds.toFixed(1) + ' s';
  } else {
    bar.hidden = true;
    if (s && s.status === 'failed') showError(new Error(s.error));
  }
}

function renderMoves(st) {
  const ol = $('move-list');
  clear(ol);
  page.line.forEach((mv, i) => {
    const li = document.createElement('li');
    li.textContent = mv;
    if (i === st.ply - 1) li.className = 'current';
    else if (i >= st.ply) li.className = 'future';
    li.addEventListener('click', () => goTo(i + 1));
    ol.appendChild(li);
  });
}

// Moves to ply k along the line (loading the line's first k moves).
function goTo(k) {
  k = Math.max(0, Math.min(page.line.length, k));
  if (k === page.st.ply) return;
  page.autoplay = false; // browsing: nobody moves on their own until a move is made
  page.hint = null;
  const line = page.line.slice();
  act('load', {moves: line.slice(0, k)}).then(() => { page.line = line; render(); });
}

function renderAnalysis(st) {
  const box = $('analysis');
  clear(box);
  const s = st.search;
  if (page.hint && page.hint.ply === st.ply) {
    const p = document.createElement('p');
    p.textContent = 'Hint (' + page.hint.player + '): ' + page.hint.move;
    box.appendChild(p);
  }
  if (s && s.note && s.ply === st.ply) {
    const n = document.createElement('p');
    n.className = 'note';
    n.textContent = s.note;
    box.appendChild(n);
  }
  if (!s || s.kind !== 'analyze' || s.ply !== st.ply) return;
  const p = document.createElement('p');
  const me = st.to_move;
  const v = s.value || s.net_value;
  p.textContent = `${s.status === 'running' ? 'Analysing' : 'Analysed'}: ${s.done} playouts with the ${s.evaluator}` +
    (v && me !== null ? ` · value for ${seatName(st, me)}: ${fmt(v[me])}` : '') +
    (s.evaluator === 'model' && me !== null ? ` (the network alone ${fmt(s.net_value[me])}` +
      (s.net_wdl ? `: win ${pct(s.net_wdl[0])}, draw ${pct(s.net_wdl[1])}, loss ${pct(s.net_wdl[2])}` : '') +
      ')' : '');
  box.appendChild(p);
  if (s.pv.length) {
    const pv = document.createElement('p');
    pv.textContent = 'Principal variation: ' + s.pv.join(' ');
    box.appendChild(pv);
  }
  const rows = s.visits.map((n, a) => ({a, n, p: s.policy[a], q: s.q[a]})).filter((r) => r.n > 0 || r.p > 0);
  rows.sort((x, y) => y.n - x.n || y.p - x.p);
  const t = document.createElement('table');
  t.innerHTML = '<tr><th>move</th><th>visits</th><th>policy</th><th>Q</th></tr>';
  for (const r of rows.slice(0, 10)) {
    const tr = document.createElement('tr');
    for (const cell of [moveName(st, r.a), r.n, (100 * r.p).toFixed(1) + '%', r.q === null ? '' : fmt(r.q)]) {
      const td = document.createElement('td');
      td.textContent = cell;
      tr.appendChild(td);
    }
    t.appendChild(tr);
  }
  box.appendChild(t);
}

function fmt(v) { return (v >= 0 ? '+' : '') + v.toFixed(3); }

function renderScore(st) {
  const el = $('score');
  clear(el);
  if (!st.score) return;
  st.score.triangles.forEach((t, p) => {
    const span = document.createElement('span');
    span.textContent = `${seatName(st, p)}: ${t} triangles, largest group ${st.score.groups[p]}   `;
    el.appendChild(span);
  });
}

// ---- charts ----

// series: [{points: [[x, y]], err: [[lo, hi]] | null, cls, dots, label}]; opts: {xlabel,
// ylabel, ymin, ymax, hlines: [{y, label}], dotClass}
function chart(el, series, opts) {
  clear(el);
  const W = el.clientWidth || 400, H = el.clientHeight || 200;
  el.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const L = 48, R = 12, T = 10, B = 30;
  const xs = [], ys = [];
  for (const s of series) {
    for (let i = 0; i < s.points.length; i++) {
      xs.push(s.points[i][0]);
      ys.push(s.points[i][1]);
      if (s.err) ys.push(s.err[i][0], s.err[i][1]);
    }
  }
  for (const h of opts.hlines || []) ys.push(h.y);
  if (!xs.length) {
    svg(el, 'text', {class: 'tick', x: W / 2, y: H / 2, 'text-anchor': 'middle'}, opts.empty || 'no data yet');
    return;
  }
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  let y0 = opts.ymin !== undefined ? opts.ymin : Math.min(...ys);
  let y1 = opts.ymax !== undefined ? opts.ymax : Math.max(...ys);
  if (x1 === x0) { x0 -= 1; x1 += 1; }
  if (y1 === y0) { y0 -= 1; y1 += 1; }
  const pad = (y1 - y0) * 0.05;
  if (opts.ymin === undefined) y0 -= pad;
  if (opts.ymax === undefined) y1 += pad;
  const X = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const Y = (y) => T + (y1 - y) / (y1 - y0) * (H - T - B);
  svg(el, 'line', {class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B});
  svg(el, 'line', {class: 'axis', x1: L, y1: T, x2: L, y2: H - B});
  for (const t of ticks(y0, y1, 5)) {
    svg(el, 'text', {class: 'tick', x: L - 4, y: Y(t) + 3, 'text-anchor': 'end'}, shortNum(t));
    svg(el, 'line', {class: 'axis', x1: L - 2, y1: Y(t), x2: L, y2: Y(t)});
  }
  for (const t of ticks(x0, x1, 6).filter((t) => !opts.intX || Number.isInteger(t))) {
    svg(el, 'text', {class: 'tick', x: X(t), y: H - B + 13, 'text-anchor': 'middle'}, shortNum(t));
  }
  if (opts.xlabel) svg(el, 'text', {class: 'tick', x: W - R, y: H - 3, 'text-anchor': 'end'}, opts.xlabel);
  for (const h of opts.hlines || []) {
    svg(el, 'line', {class: 'baseline', x1: L, y1: Y(h.y), x2: W - R, y2: Y(h.y)});
    svg(el, 'text', {class: 'baseline-label', x: W - R - 2, y: Y(h.y) - 3, 'text-anchor': 'end'}, h.label);
  }
  series.forEach((s) => {
    if (s.points.length > 1) {
      svg(el, 'polyline', {class: 'series ' + s.cls, points: s.points.map(([x, y]) => X(x) + ',' + Y(y)).join(' '), fill: 'none'});
    }
    s.points.forEach(([x, y], i) => {
      if (s.err) {
        svg(el, 'line', {class: 'errbar ' + s.cls, x1: X(x), y1: Y(s.err[i][0]), x2: X(x), y2: Y(s.err[i][1])});
      }
      if (s.dots) {
        const c = svg(el, 'circle', {class: (s.dotClass || 'dot') + ' ' + s.cls, cx: X(x), cy: Y(y), r: 3});
        const t = document.createElementNS(SVGNS, 'title');
        t.textContent = s.label ? s.label(i) : `${x}: ${y}`;
        c.appendChild(t);
      }
    });
  });
}

function ticks(a, b, n) {
  const step0 = (b - a) / n, mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= step0) || step0;
  const out = [];
  for (let t = Math.ceil(a / step) * step; t <= b + 1e-9; t += step) out.push(Math.abs(t) < 1e-12 ? 0 : t);
  return out;
}

function shortNum(t) {
  if (Math.abs(t) >= 1000) return (t / 1000).toFixed(1) + 'k';
  return Number.isInteger(t) ? String(t) : t.toFixed(2).replace(/0+$/, '');
}

function renderValueGraph(st) {
  const n = st.game.players === 2 ? 1 : st.game.players;
  const series = [];
  for (let p = 0; p < n; p++) {
    const pts = [];
    st.values.forEach((v, k) => { if (v) pts.push([k, v[p]]); });
    series.push({points: pts, cls: 's' + p, dots: true, label: (i) => `after ${pts[i][0]} moves: ${fmt(pts[i][1])}`});
  }
  chart($('value-graph'), series, {ymin: -1, ymax: 1, xlabel: 'moves', intX: true, hlines: [{y: 0, label: ''}],
    empty: 'analyse or let a search move to see values'});
}

// ---- the run dashboard ----

async function loadRun() {
  try {
    const run = await api('run');
    page.run = run;
    $('run-message').textContent = run.warnings && run.warnings.length ? run.warnings.join('; ') : '';
    renderRun(run);
  } catch (e) {
    $('run-message').textContent = e.message;
  }
}

function hours(s) { return s / 3600; }

function renderRun(run) {
  $('run-title').textContent = 'Run ' + run.dir;
  const st = run.state || {};
  const done = run.generations.filter((g) => g.arena_done).length;
  $('run-summary').textContent = `${describeGame(run.game)} · ${done} generations rated` +
    (st.generation ? ` · now generation ${st.generation} (${st.stage})` : '') +
    ` · best gen_${String(run.best).padStart(4, '0')} · run clock ${(run.seconds / 3600).toFixed(2)} h` +
    ` · updated ${new Date().toLocaleTimeString()}`;
  const rated = run.generations.filter((g) => g.elo !== undefined);
  const baselines = run.ratings.filter((r) => !/^gen_\d+$/.test(r.name)).map((r) => ({y: r.elo, label: r.name}));
  const label = (list) => (i) => `gen ${list[i].generation}: ${list[i].elo} [${list[i].lo}, ${list[i].hi}]`;
  chart($('elo-gen'), [{points: rated.map((g) => [g.generation, g.elo]), err: rated.map((g) => [g.lo, g.hi]),
    cls: 's0', dots: true, dotClass: 'elo-point', label: label(rated)}], {xlabel: 'generation', hlines: baselines, intX: true});
  const timed = rated.filter((g) => g.seconds > 0);
  chart($('elo-time'), [{points: timed.map((g) => [hours(g.seconds), g.elo]), err: timed.map((g) => [g.lo, g.hi]),
    cls: 's0', dots: true, label: label(timed)}], {xlabel: 'hours', hlines: baselines});
  const steps = {};
  run.generations.forEach((g) => { if (g.train) steps[g.generation] = g.train.steps; });
  const lx = (p) => p.generation - 1 + p.step / (steps[p.generation] || p.step || 1);
  const ls = (k, cls) => ({points: run.losses.filter((p) => p[k] !== undefined).map((p) => [lx(p), p[k]]), cls, dots: false});
  chart($('loss-chart'), [ls('policy', 's0'), ls('value', 's1'), ls('total', 's2')], {xlabel: 'generation (blue policy, red value, green total)'});
  renderGenTable(run);
  renderGames(run);
}

function cellRow(tr, cells) {
  for (const c of cells) {
    const td = document.createElement('td');
    if (c && typeof c === 'object') {
      td.textContent = c.text;
      if (c.cls) td.className = c.cls;
    } else {
      td.textContent = c === undefined || c === null ? '' : c;
    }
    tr.appendChild(td);
  }
}

function renderGenTable(run) {
  const t = $('gen-table');
  t.className = 'data';
  clear(t);
  const head = document.createElement('tr');
  for (const h of ['gen', 'self-play games', 'positions/s', 'draws', 'mean length', 'train steps', 'policy loss',
    'value loss', 'vs best', 'promoted', 'Elo', '95% interval', 'clock (h)', 'files']) {
    const th = document.createElement('th');
    th.textContent = h;
    head.appendChild(th);
  }
  t.appendChild(head);
  for (const g of run.generations.slice().reverse()) {
    const tr = document.createElement('tr');
    if (g.promoted) tr.className = 'promoted';
    const sp = g.selfplay || {}, tr_ = g.train || {};
    const n2 = (v) => v === undefined ? '' : Number(v).toFixed(3);
    cellRow(tr, [g.generation, sp.games, sp.positions_per_s !== undefined ? Math.round(sp.positions_per_s) : '',
      sp.draws, sp.mean_length !== undefined ? sp.mean_length.toFixed(1) : '', tr_.steps, n2(tr_.policy), n2(tr_.value),
      g.score_vs_best !== undefined ? `${(100 * g.score_vs_best).toFixed(0)}% of ${g.games_vs_best} vs ${g.vs_best}` : '',
      g.promoted === undefined ? '' : g.promoted ? 'yes' : 'no',
      g.elo !== undefined ? g.elo.toFixed(0) : '', g.elo !== undefined ? `${g.lo.toFixed(0)} … ${g.hi.toFixed(0)}` : '',
      g.seconds ? hours(g.seconds).toFixed(2) : '',
      {text: [g.data ? 'data' : '', g.model ? 'model' : '', g.arena_done ? 'arena' : ''].filter(Boolean).join(' '), cls: 'l'}]);
    t.appendChild(tr);
  }
}

function renderGames(run) {
  const t = $('games-table');
  t.className = 'data';
  clear(t);
  $('games-title').textContent = run.games_generation
    ? `Arena games of generation ${run.games_generation}` : 'Arena games (none finished yet)';
  run.games.forEach((g) => {
    const tr = document.createElement('tr');
    const res = (g.players || []).map((p, i) => `${p} ${g.result && g.result[i] > 0 ? '+' : ''}${g.result ? g.result[i] : ''}`).join(' · ');
    cellRow(tr, [{text: res, cls: 'l'}, (g.moves || []).length + ' moves']);
    const td = document.createElement('td');
    const b = document.createElement('button');
    b.textContent = 'replay';
    b.addEventListener('click', () => replay(run, g));
    td.appendChild(b);
    tr.appendChild(td);
    t.appendChild(tr);
  });
}

async function replay(run, g) {
  showTab('play');
  try {
    const n = run.game.name === 'sanling' ? run.game.players : 2;
    await newGame({game: run.game, players: Array(n).fill('human'), moves: []});
    page.line = g.moves.slice();
    page.autoplay = false;
    render();
  } catch (e) {
    showError(e);
  }
}

// ---- tabs and wiring ----

function showTab(name) {
  $('play').hidden = name !== 'play';
  $('run').hidden = name !== 'run';
  $('tab-play').classList.toggle('active', name === 'play');
  $('tab-run').classList.toggle('active', name === 'run');
  if (page.runTimer) clearInterval(page.runTimer);
  page.runTimer = null;
  if (name === 'run') {
    loadRun();
    page.runTimer = setInterval(loadRun, 5000);
  }
}

function wire() {
  $('tab-play').addEventListener('click', () => showTab('play'));
  $('tab-run').addEventListener('click', () => showTab('run'));
  $('game-select').addEventListener('change', buildSeats);
  $('new-game').addEventListener('click', () => newGame().catch(showError));
  $('undo').addEventListener('click', () => { page.hint = null; act('undo'); });
  $('back').addEventListener('click', () => goTo(page.st.ply - 1));
  $('forward').addEventListener('click', () => goTo(page.st.ply + 1));
  $('hint').addEventListener('click', async () => {
    const st = await act('genmove', {player: page.info.hint, play: false});
    if (!st) return;
    const wait = setInterval(() => {
      const s = page.st.search;
      if (!s || s.status === 'running' || s.kind !== 'genmove') return;
      clearInterval(wait);
      if (s.status === 'done' && s.action >= 0) {
        page.hint = {action: s.action, move: s.move, player: s.player, ply: s.ply};
        render();
      }
    }, 200);
  });
  $('analyze').addEventListener('click', () => {
    const n = parseInt($('playouts').value, 10) || page.info.simulations;
    act('analyze', {playouts: Math.min(n, page.info.limits.playouts), graph: true});
  });
  $('stop').addEventListener('click', () => { page.autoplay = false; act('cancel'); });
  $('show-overlay').addEventListener('change', render);
  document.querySelectorAll('input[name=overlay]').forEach((r) => r.addEventListener('change', render));
  $('load-moves').addEventListener('click', async () => {
    const text = $('moves-text').value.trim();
    page.line = [];
    page.autoplay = false;
    await act('load', {moves: text});
  });
  $('save-moves').addEventListener('click', () => { $('moves-text').value = page.st.moves.join(' '); });
  window.addEventListener('resize', () => { if (page.run && !$('run').hidden) renderRun(page.run); });
  window.addEventListener('pagehide', () => {
    if (page.st) {
      fetch('/api/close', {method: 'POST', keepalive: true, headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({session: page.st.session})}).catch(() => {});
    }
  });
}

async function main() {
  wire();
  try {
    page.info = await api('info');
  } catch (e) {
    showError(e);
    return;
  }
  const info = page.info;
  $('server-info').textContent = `${info.config}` + (info.model ? ` · model ${info.model}` : '') +
    (info.run ? ' · run dashboard' : '');
  const dl = $('player-kinds');
  for (const k of ['human', 'model', 'model:800', 'mcts:800', 'alphabeta:4', 'threat:1s', 'random', 'perfect']) {
    const o = document.createElement('option');
    o.value = k;
    dl.appendChild(o);
  }
  page.presets = presets(info);
  const sel = $('game-select');
  page.presets.forEach((p, i) => {
    const o = document.createElement('option');
    o.value = i;
    o.textContent = p.label;
    sel.appendChild(o);
  });
  $('playouts').value = Math.min(info.simulations * 4, info.limits.playouts);
  buildSeats();
  if (info.run && location.hash === '#run') showTab('run');
  await newGame().catch(showError);
}

main();
