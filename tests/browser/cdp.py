"""cdp.py — a minimal driver of headless Chromium over the DevTools protocol (python3-websocket),
for the browser tests of gridzero serve and the screenshots in docs/. Starts `gridzero serve`
on a free port and Chromium with its own profile; both are stopped by close()."""
import base64
import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import websocket


def _die_with_parent():
    """Runs in the child before exec: SIGTERM when this script dies, however it dies (a
    test runner's timeout kills it without running its finally blocks)."""
    try:
        ctypes.CDLL('libc.so.6', use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Serve:
    """`gridzero serve --port 0 ARGS...`; .url is where it listens."""

    def __init__(self, binary, args):
        self.proc = subprocess.Popen([binary, 'serve', '--port', '0', '--quiet'] + list(args),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=_die_with_parent)
        line = self.proc.stdout.readline()
        m = re.search(r'http://[^/ ]+:(\d+)/', line)
        if not m:
            err = self.proc.stderr.read()
            self.proc.kill()
            raise RuntimeError('gridzero serve did not start: ' + line + err)
        self.url = 'http://localhost:%s/' % m.group(1)
        for pipe in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=lambda p=pipe: [None for _ in p], daemon=True).start()

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Browser:
    def __init__(self, width=1400, height=900):
        exe = shutil.which('chromium') or shutil.which('chromium-browser') or shutil.which('google-chrome')
        if not exe:
            raise FileNotFoundError('chromium is not installed')
        self.profile = tempfile.mkdtemp(prefix='gz_chromium_')
        self.proc = subprocess.Popen(
            [exe, '--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
             '--disable-extensions', '--remote-debugging-port=0', '--user-data-dir=' + self.profile,
             '--window-size=%d,%d' % (width, height), 'about:blank'],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=_die_with_parent)
        ws_url = None
        deadline = time.time() + 30
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r'DevTools listening on (ws://\S+)', line)
            if m:
                ws_url = m.group(1)
                break
        if not ws_url:
            self.close()
            raise RuntimeError('chromium did not start')
        # keep reading its log, or a full pipe would stop it
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.ws = websocket.create_connection(ws_url, timeout=60)
        self.next_id = 0
        target = self.call('Target.createTarget', {'url': 'about:blank'})['targetId']
        self.session = self.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
        self.call('Page.enable', {}, session=True)
        self.call('Runtime.enable', {}, session=True)
        self.errors = []
        self.call('Emulation.setDeviceMetricsOverride',
                  {'width': width, 'height': height, 'deviceScaleFactor': 1, 'mobile': False}, session=True)

    def call(self, method, params, session=False):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params}
        if session:
            msg['sessionId'] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            r = json.loads(self.ws.recv())
            if r.get('method') == 'Runtime.exceptionThrown':
                self.errors.append(r['params']['exceptionDetails'].get('exception', {}).get('description', str(r)))
            if r.get('method') == 'Runtime.consoleAPICalled' and r['params'].get('type') == 'error':
                self.errors.append(' '.join(str(a.get('value', a.get('description'))) for a in r['params']['args']))
            if r.get('id') == self.next_id:
                if 'error' in r:
                    raise RuntimeError('%s: %s' % (method, r['error']))
                return r['result']

    def goto(self, url):
        self.call('Page.navigate', {'url': url}, session=True)
        self.wait('document.readyState === "complete"')

    def eval(self, js):
        r = self.call('Runtime.evaluate', {'expression': js, 'awaitPromise': True, 'returnByValue': True},
                      session=True)
        if 'exceptionDetails' in r:
            raise RuntimeError('page script failed: %s\n%s' % (js, r['exceptionDetails']))
        return r['result'].get('value')

    def wait(self, js, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.eval('!!(%s)' % js):
                return
            time.sleep(0.05)
        raise TimeoutError('waited %ds for: %s' % (timeout, js))

    def screenshot(self, path):
        data = self.call('Page.captureScreenshot', {'format': 'png'}, session=True)['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
