"""A real headless browser for the report's tests: Debian's chromium driven through the Chrome
DevTools protocol over its debugging pipe (file descriptors 3 and 4, JSON messages ended by a NUL),
so no websocket package or driver binary is needed. It records the console's errors, every
network request the page makes, and takes screenshots."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        p = shutil.which(name)
        if p:
            return p
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless chromium with one page; ``open(path)`` loads a file and waits for its load."""

    def __init__(self, binary: str | None = None, width: int = 1400, height: int = 1000):
        binary = binary or find_chromium()
        if not binary:
            raise BrowserError("no chromium on this machine (apt-get install chromium)")
        self.profile = tempfile.mkdtemp(prefix="bwprof-chromium-")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()

        def fds():  # the child reads commands on fd 3 and writes answers on fd 4
            a, b = os.dup(to_child_r), os.dup(from_child_w)  # out of the way of 3 and 4 first
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--mute-audio", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, pass_fds=(3, 4))
        os.close(to_child_r)
        os.close(from_child_w)
        self.w = os.fdopen(to_child_w, "wb", buffering=0)
        self.r = os.fdopen(from_child_r, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.events: list[dict] = []
        self.session = None
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Network.enable", "Log.enable"):
            self.call(domain)
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})

    # ---- the protocol ----
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise BrowserError("chromium did not answer in time")
            chunk = self.r.read(1 << 16)
            if not chunk:
                raise BrowserError("chromium closed its debugging pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method: str, params: dict | None = None, timeout: float = 30.0) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        self.w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise BrowserError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self.events):
            if e["method"] == method:
                return self.events.pop(i)
        while True:
            m = self._read_message(deadline)
            if "method" in m:
                if m["method"] == method:
                    return m
                self.events.append(m)

    # ---- what the tests use ----
    def open(self, path: Path, timeout: float = 60.0) -> float:
        """Load ``path`` (a file) and wait for its load event; returns the seconds it took (wall
        time; ``last_load_cpu_s`` holds the CPU time the browser spent on it)."""
        self.events.clear()
        t0, c0 = time.monotonic(), self.cpu_seconds()
        self.call("Page.navigate", {"url": Path(path).resolve().as_uri()})
        self.wait_event("Page.loadEventFired", timeout)
        self.last_load_cpu_s = self.cpu_seconds() - c0
        return time.monotonic() - t0

    def eval(self, expression: str):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError(f"{expression[:60]}...: {r['exceptionDetails']}")
        return r["result"].get("value")

    def cpu_seconds(self) -> float:
        """CPU time (user + system) used so far by chromium and every process it started: what a
        page load costs, whatever else the machine is doing (wall time is not, on a shared machine)."""
        ppid, ticks = {}, {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(stat.parent.name)
            ppid[pid] = int(fields[1])
            ticks[pid] = int(fields[11]) + int(fields[12])
        tree, grew = {self.proc.pid}, True
        while grew:
            more = {p for p, parent in ppid.items() if parent in tree} - tree
            grew = bool(more)
            tree |= more
        return sum(ticks.get(p, 0) for p in tree) / os.sysconf("SC_CLK_TCK")

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen since the last open."""
        self.call("Runtime.evaluate", {"expression": "1"})  # collect the events queued so far
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(str(d.get("exception", {}).get("description") or d.get("text")))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(str(p["entry"].get("text")))
        return out

    def requests(self) -> list[str]:
        """The URLs of every request the page made since the last open (the page's own file aside)."""
        self.call("Runtime.evaluate", {"expression": "1"})
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def mouse_move(self, x: float, y: float) -> None:
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        params = {"format": "png"}
        if full_page:
            m = self.call("Page.getLayoutMetrics")
            size = m.get("cssContentSize") or m["contentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        data = self.call("Page.captureScreenshot", params)["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5)
        except (BrowserError, OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.w, self.r):
            try:
                f.close()
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
