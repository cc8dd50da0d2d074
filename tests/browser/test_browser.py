#!/usr/bin/env python3
"""The page of gridzero serve in headless Chromium (slow suite): plays a whole
tic-tac-toe game by clicking the board and checks the result the page shows; opens a
Sanling game and counts the lattice's points; checks the game menu names a game started
through the API; opens the run dashboard on a fabricated
run directory and counts the Elo chart's points. Skipped (exit 77) without chromium or
python3-websocket (scripts/setup --slow installs them). Usage: test_browser.py GRIDZERO"""
import json
import os
import shutil
import sys
import tempfile

try:
    import websocket  # noqa: F401
except ImportError:
    # Debian's python3-websocket is for /usr/bin/python3; another python3 may come first
    if os.path.exists('/usr/bin/python3') and os.path.realpath(sys.executable) != os.path.realpath('/usr/bin/python3'):
        os.execv('/usr/bin/python3', ['/usr/bin/python3'] + sys.argv)
    print('SKIP: python3-websocket is not installed (scripts/setup --slow)')
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

GZ = sys.argv[1] if len(sys.argv) > 1 else os.environ.get('GZ_BIN', 'build/gridzero')
failures = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        failures.append(what)


def tictactoe_by_clicks(b, url):
    b.goto(url)
    b.wait('page.st && page.info')
    # the form: a person in seat 1 against the solver, then "New game"
    b.eval("document.getElementById('seat-1').value = 'perfect'")
    b.eval("document.getElementById('new-game').click()")
    b.wait("page.st.players[1] === 'perfect' && page.st.ply === 0")
    clicks = 0
    while True:
        b.wait("page.st.over || (page.st.to_move === 0 && !searching(page.st))")
        if b.eval('page.st.over'):
            break
        ply = b.eval('page.st.ply')
        a = b.eval('page.st.legal[0]')
        b.eval("document.querySelector('#board .pt[data-action=\"%d\"]')"
               ".dispatchEvent(new MouseEvent('click', {bubbles: true}))" % a)
        clicks += 1
        b.wait('page.st.ply > %d' % ply)
    status = b.eval("document.getElementById('status').textContent")
    result = b.eval('page.st.result')
    stones = b.eval("document.querySelectorAll('#board .stone').length")
    moves = b.eval('page.st.ply')
    print('  %d clicks, %d moves; result %s; the page says: %s' % (clicks, moves, result, status))
    check(clicks >= 3 and stones == moves, 'tic-tac-toe: played by %d clicks, %d stones drawn' % (clicks, stones))
    want = 'a draw' if result == [0, 0] else ('White (perfect) wins' if result[1] > 0 else 'Black (you) wins')
    check(status.startswith('Game over') and want in status, 'tic-tac-toe: the result shown (%s)' % want)
    check(result[0] <= 0, 'tic-tac-toe: the person does not beat perfect play')


def sanling_lattice(b, url):
    b.goto(url)
    b.wait('page.st && page.info')
    b.eval("""(() => { const s = document.getElementById('game-select');
              s.value = [...s.options].find(o => o.textContent.startsWith('Sanling 13, three')).value;
              s.dispatchEvent(new Event('change')); })()""")
    b.eval("document.getElementById('seat-1').value = 'random'")
    b.eval("document.getElementById('seat-2').value = 'random'")
    b.eval("document.getElementById('new-game').click()")
    b.wait("page.st.game.name === 'sanling'")
    points = b.eval("document.querySelectorAll('#board .pt').length")
    neutral = b.eval("document.querySelectorAll('#board .stone.neutral').length")
    frontier = b.eval("document.querySelectorAll('#board .frontier').length")
    check(points == 13 * 13, 'sanling 13: %d lattice points drawn (169)' % points)
    check(neutral == 1, 'sanling 13: one neutral stone')
    check(frontier == 6, 'sanling 13: 6 frontier points around it (%d)' % frontier)
    # the centre g7's neighbours lie on the lattice's six directions, all equally far
    d = b.eval("""(() => { const p = (a) => { const c = document.querySelector('#board .pt[data-action="' + a + '"]');
                   return [+c.getAttribute('cx'), +c.getAttribute('cy')]; };
                   const o = p(6 * 13 + 6);
                   return [[5,6],[7,6],[6,5],[6,7],[5,7],[7,5],[5,5]].map(([r, c]) => {
                     const q = p(r * 13 + c); return Math.hypot(q[0] - o[0], q[1] - o[1]); }); })()""")
    six = d[:6]
    check(max(six) - min(six) < 1e-6 and d[6] > 1.5 * six[0],
          'sanling 13: the six neighbours are equally far, (r-1,c-1) is not a neighbour')


def menu_follows_the_board(b, url):
    # a game started through the API, not the menu: the menu then names that game (it
    # read "server default (m,n,k 3x3 k=3)" over a 15x15 board)
    b.goto(url)
    b.wait('page.st && page.info')
    b.eval("newGame({players: ['human', 'human'], game: {name: 'mnk', rows: 9, cols: 9, k: 5}})")
    b.wait('page.st.game.rows === 9')
    label = b.eval("(() => { const s = document.getElementById('game-select'); return s.options[s.selectedIndex].textContent; })()")
    check('9×9' in label, 'menu: names the game on the board (%s)' % label)
    b.eval("newGame({players: ['human', 'human'], game: {name: 'mnk', rows: 7, cols: 7, k: 4}})")
    b.wait('page.st.game.rows === 7')
    label = b.eval("(() => { const s = document.getElementById('game-select'); return s.options[s.selectedIndex].textContent; })()")
    check('7×7 k=4' in label, 'menu: a game no preset has gets its own entry (%s)' % label)


def fabricate_run(dirname):
    for sub in ('models', 'data', 'arena'):
        os.makedirs(os.path.join(dirname, sub))
    for k in range(4):
        open(os.path.join(dirname, 'models', 'gen_%04d.h5' % k), 'w').close()
    with open(os.path.join(dirname, 'best'), 'w') as f:
        f.write('models/gen_0003.h5\n')
    with open(os.path.join(dirname, 'state.json'), 'w') as f:
        f.write('{"generation": 3, "stage": "done", "best": "models/gen_0003.h5"}\n')
    metrics = []
    for k in range(1, 4):
        with open(os.path.join(dirname, 'arena', 'gen_%04d.jsonl' % k), 'w') as f:
            for i in range(6):
                win = 1 if i < 4 else -1
                f.write(json.dumps({'players': ['gen_%04d' % k, 'gen_%04d' % (k - 1)], 'result': [win, -win],
                                    'moves': ['b2', 'a1', 'c3']}) + '\n')
                f.write(json.dumps({'players': ['gen_%04d' % k, 'random'], 'result': [1, -1],
                                    'moves': ['b2', 'a1']}) + '\n')
        metrics.append({'event': 'selfplay', 'generation': k, 'games': 50, 'run_seconds': 100 * k - 50})
        metrics.append({'event': 'train', 'generation': k, 'step': 10, 'policy': 2 - k / 3, 'value': 1 - k / 5,
                        'total': 3 - k / 2, 'run_seconds': 100 * k - 20})
        metrics.append({'event': 'arena', 'generation': k, 'run_seconds': 100 * k})
    with open(os.path.join(dirname, 'metrics.jsonl'), 'w') as f:
        for m in metrics:
            f.write(json.dumps(m) + '\n')


def dashboard(b, url):
    b.goto(url)
    b.wait('page.info')
    b.eval("document.getElementById('tab-run').click()")
    b.wait("page.run && document.querySelectorAll('#elo-gen .elo-point').length > 0")
    rated = b.eval('page.run.generations.filter(g => g.elo !== undefined).length')
    dots = b.eval("document.querySelectorAll('#elo-gen .elo-point').length")
    rows = b.eval("document.querySelectorAll('#gen-table tr').length")
    check(rated == 4 and dots == rated, 'dashboard: %d Elo points for %d rated generations (4)' % (dots, rated))
    check(rows == 1 + 4, 'dashboard: a table row per generation')


def main():
    try:
        browser = cdp.Browser()
    except FileNotFoundError as e:
        print('SKIP: %s (scripts/setup --slow)' % e)
        sys.exit(77)
    run = tempfile.mkdtemp(prefix='gz_browser_run_')
    try:
        fabricate_run(run)
        serve = cdp.Serve(GZ, [])
        try:
            tictactoe_by_clicks(browser, serve.url)
            sanling_lattice(browser, serve.url)
            menu_follows_the_board(browser, serve.url)
        finally:
            serve.close()
        serve = cdp.Serve(GZ, ['--run', run])
        try:
            dashboard(browser, serve.url)
        finally:
            serve.close()
        check(not browser.errors, 'no script errors in the page %s' % (browser.errors or ''))
    finally:
        browser.close()
        shutil.rmtree(run, ignore_errors=True)
    print('browser: %d failed' % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
